// Check a replay's `result_jws` offline with only the service's public keys (its JWKS).
//
//   node verify-result.js https://engine.example/.well-known/jwks.json answer.json
//
// `answer.json` is a replay answer asked with `"result_jws": true` (or a bare compact JWS).
// Prints the verified result as JSON and exits 0, or says why it refused and exits 1. No
// secret of the service is needed, so nothing here can sign a result. Needs `jose`.
import { readFileSync } from "node:fs";
import { compactVerify, createRemoteJWKSet } from "jose";

const RESULT_TYPE = "patience-result+jws";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

// The JSON text of a value with keys sorted at every level: two equal results, one text.
function canonical(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(value[k] ?? null)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

// The result a compact JWS carries, once its Ed25519 signature checks with the key its
// `kid` names in the JWKS at `jwksUrl`; throws otherwise.
export async function verifyToken(token: string, jwksUrl: URL): Promise<{ [key: string]: Json }> {
  const { payload, protectedHeader } = await compactVerify(token, createRemoteJWKSet(jwksUrl), {
    algorithms: ["EdDSA"],
  });
  if (protectedHeader.typ !== RESULT_TYPE) throw new Error(`not a result JWS (typ ${protectedHeader.typ})`);
  const result = JSON.parse(new TextDecoder().decode(payload)) as Json;
  if (result === null || typeof result !== "object" || Array.isArray(result)) throw new Error("the JWS does not carry a result");
  return result;
}

// The verified result of a replay answer (or of a bare compact JWS): the JWS must check,
// and an answer's `result` must be the one the JWS signed.
export async function verifyAnswer(answer: Json, jwksUrl: URL): Promise<{ [key: string]: Json }> {
  if (typeof answer === "string") return verifyToken(answer, jwksUrl);
  const token = answer !== null && typeof answer === "object" && !Array.isArray(answer) ? answer["result_jws"] : undefined;
  if (typeof token !== "string") {
    throw new Error("no result_jws: an HMAC-signed result can only be checked with the service's secret");
  }
  const result = await verifyToken(token, jwksUrl);
  const answered = (answer as { [key: string]: Json })["result"];
  if (answered !== undefined && canonical(answered) !== canonical(result)) {
    throw new Error("the answer's result is not the one the JWS signed");
  }
  return result;
}

const [jwksUrl, path] = process.argv.slice(2);
if (jwksUrl === undefined || path === undefined) {
  console.error("usage: node verify-result.js <jwks url> <answer.json>");
  process.exit(2);
}
const text = readFileSync(path, "utf-8").trim();
try {
  const answer = (text.startsWith("{") || text.startsWith('"') ? JSON.parse(text) : text) as Json;
  console.log(canonical(await verifyAnswer(answer, new URL(jwksUrl))));
} catch (e) {
  console.error(`refused: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
