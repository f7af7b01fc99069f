// The TypeScript example consumer (@pact-foundation/pact, Pact V4): a browser frontend's
// play loop against the engine, in open mode (Penguin deal 1) and sealed mode (Forty
// Thieves deal 1), recorded into contracts/pacts/web-play-patience-engine.json.
//
// It pins what README's "Contract testing" section says a consumer may pin (an open deal's
// layout and legal moves in order, statuses, problem codes, the first event of a move) and
// matches the rest by type or pattern (signatures, sealed parts, search stats, request ids,
// texts). Every state it sends back is injected by the provider state
// (fromProviderState("${state}", example)): the example is what the mock answers, and no
// signature is frozen in the pact. Each interaction gets a mock server of its own.
//
// Run by `make pact-record` (tsc, then node --test), with PACT_DO_NOT_TRACK=true.

import "./noTracking";

import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import path from "node:path";
import { before, describe, test } from "node:test";

import { MatchersV3, PactV4 } from "@pact-foundation/pact";

import examples from "../examples.json";
import { EngineProblem, type Json, type JsonObject, PlayClient } from "./playClient";

const { like, eachLike, regex, integer, string, fromProviderState } = MatchersV3;

// contracts/consumers/ts/build/ts/play.pact.test.js -> contracts/pacts (PACT_OUTPUT_DIR: elsewhere,
// where tests/pact compares what it records with the committed pact).
const PACTS = process.env.PACT_OUTPUT_DIR || path.resolve(__dirname, "..", "..", "..", "..", "pacts");
const CONSUMER = "web-play";
const PROVIDER = "patience-engine";

// What a consumer matches by form only.
const CARD = /^[A23456789TJQK][CDHS]$/;
const PILE = /^[a-z][a-z_-]*:[0-9]+$/;
const KEY_ID = /^[A-Za-z0-9_-]{1,32}$/;
const MAC = /^[A-Za-z0-9_-]{43}$/;
const SEALED_PART = /^[A-Za-z0-9_-]+={0,2}$/;
const RULE = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const ACTION = /^(move|deal|redeal)$/;
const RESULT = /^(solved|unsolvable|unknown)$/;
const SHA256 = /^[0-9a-f]{64}$/;

const OPEN = examples.open as unknown as Record<string, JsonObject>;
const SEALED = examples.sealed as unknown as Record<string, JsonObject>;

/** A new pact with one interaction given `state`. */
function interaction(description: string, state: string) {
  const pact = new PactV4({ consumer: CONSUMER, provider: PROVIDER, dir: PACTS, logLevel: "warn" });
  return pact.addInteraction().given(state).uponReceiving(description);
}

/** Legal moves: every one has an action; only card moves have from, to and count. */
const anyMoves = (action: string) => eachLike({ action: regex(ACTION, action) });

const cardMove = (move: JsonObject) => ({
  action: "move",
  from: regex(PILE, String(move.from)),
  to: regex(PILE, String(move.to)),
  count: integer(Number(move.count)),
});

const signature = () => ({ kid: regex(KEY_ID, "example"), mac: regex(MAC, "A".repeat(43)) });

/** A sealed state: game and deal pinned, layout by type, signature and sealed part by pattern. */
const sealedState = (example: JsonObject) => ({
  format: 1,
  game: example.game,
  deal: example.deal,
  options: like(example.options),
  piles: like(example.piles),
  counters: like(example.counters),
  face_down: like(example.face_down),
  sealed: regex(SEALED_PART, "c2VhbGVk"),
  signature: signature(),
});

const stats = () =>
  like({ states: 1, seconds: 0.5, states_per_second: 1.5, max_seconds: 1.0, max_states: 1 });

const problem = (code: string, status: number, example: JsonObject, pinned: Record<string, unknown> = {}) => ({
  status,
  code,
  title: string(String(example.title)),
  detail: string(String(example.detail)),
  request_id: string(String(example.request_id)),
  ...pinned,
});

const JSON_TYPE = { "Content-Type": "application/json" };
const PROBLEM_TYPE = { "Content-Type": "application/problem+json" };

before(() => rmSync(path.join(PACTS, `${CONSUMER}-${PROVIDER}.json`), { force: true }));

describe("open mode: Penguin deal 1", () => {
  const deal = OPEN.deal as JsonObject;
  const state = deal.state as JsonObject;
  const move = OPEN.move as JsonObject;
  const moved = OPEN.moved as JsonObject;

  test("deal: the layout and the legal moves, in order, are pinned", () =>
    interaction("open: a deal of Penguin 1", "the engine in open mode")
      .withRequest("POST", "/v1/games/penguin/deals", (b) => b.jsonBody({ deal: "1" }))
      .willRespondWith(200, (b) => b.headers(JSON_TYPE).jsonBody(deal))
      .executeTest(async (mock) => {
        const dealt = await new PlayClient(mock.url, "penguin").deal("1");
        assert.deepEqual((dealt.legal_moves as Json[])[0], move);
      }));

  test("move: the first event is the move asked for", () =>
    interaction("open: a move", "a Penguin deal 1")
      .withRequest("POST", "/v1/games/penguin/moves", (b) =>
        b.jsonBody({ state: fromProviderState("${state}", state), move: fromProviderState("${legal_move}", move) }),
      )
      .willRespondWith(200, (b) =>
        b.headers(JSON_TYPE).jsonBody({
          state: like(moved.state),
          legal_moves: anyMoves("move"),
          status: "playing",
          events: [{ type: "move", from: regex(PILE, String(move.from)), to: regex(PILE, String(move.to)), cards: eachLike(regex(CARD, "3D")) }],
        }),
      )
      .executeTest(async (mock) => {
        const after = await new PlayClient(mock.url, "penguin").move(state, move);
        assert.equal(((after.events as JsonObject[])[0] as JsonObject).type, "move");
      }));

  test("an illegal move is refused with 409 illegal-move", () =>
    interaction("open: an illegal move", "a Penguin deal 1")
      .withRequest("POST", "/v1/games/penguin/moves", (b) =>
        b.jsonBody({ state: fromProviderState("${state}", state), move: fromProviderState("${illegal_move}", move) }),
      )
      .willRespondWith(409, (b) =>
        b.headers(PROBLEM_TYPE).jsonBody(problem("illegal-move", 409, OPEN.illegal, { rule: regex(RULE, String(OPEN.illegal.rule)) })),
      )
      .executeTest(async (mock) => {
        await assert.rejects(new PlayClient(mock.url, "penguin").move(state, move), (e) => e instanceof EngineProblem && e.code === "illegal-move");
      }));

  test("hint", () =>
    interaction("open: a hint", "a Penguin deal 1")
      .withRequest("POST", "/v1/games/penguin/hint", (b) => b.jsonBody({ state: fromProviderState("${state}", state) }))
      .willRespondWith(200, (b) =>
        b.headers(JSON_TYPE).jsonBody({
          move: like(cardMove(OPEN.hint.move as JsonObject)),
          reason: string(String(OPEN.hint.reason)),
          winnable: true,
          stats: stats(),
          knowledge: "full",
          samples: null,
        }),
      )
      .executeTest(async (mock) => {
        const hint = await new PlayClient(mock.url, "penguin").hint(state);
        assert.equal(hint.knowledge, "full");
      }));

  test("solve", () =>
    interaction("open: a solve", "a Penguin deal 1")
      .withRequest("POST", "/v1/games/penguin/solve", (b) =>
        b.jsonBody({ state: fromProviderState("${state}", state), limits: { max_seconds: 5 } }),
      )
      .willRespondWith(200, (b) =>
        b.headers(JSON_TYPE).jsonBody({
          result: "solved",
          moves: eachLike(cardMove((OPEN.solved.moves as JsonObject[])[0] as JsonObject)),
          stats: stats(),
          knowledge: "full",
          samples: null,
        }),
      )
      .executeTest(async (mock) => {
        assert.equal((await new PlayClient(mock.url, "penguin").solve(state, 5)).result, "solved");
      }));

  test("replay", () =>
    interaction("open: a replay", "a Penguin game after 3 moves")
      .withRequest("POST", "/v1/games/penguin/replays", (b) =>
        b.jsonBody({ deal: "1", moves: fromProviderState("${moves}", [move]) }),
      )
      .willRespondWith(200, (b) =>
        b.headers(JSON_TYPE).jsonBody({
          state: like(OPEN.replayed.state),
          legal_moves: anyMoves("move"),
          status: "playing",
          moves: integer(1),
          result: like({ game: "penguin", deal: "1", state_protection: "open", moves_sha256: regex(SHA256, "0".repeat(64)) }),
        }),
      )
      .executeTest(async (mock) => {
        assert.equal((await new PlayClient(mock.url, "penguin").replay("1", [move])).status, "playing");
      }));

  test("an unknown game is 404 unknown-game", () =>
    interaction("open: a deal of an unknown game", "the engine in open mode")
      .withRequest("POST", "/v1/games/no-such-game/deals", (b) => b.jsonBody({ deal: "1" }))
      .willRespondWith(404, (b) => b.headers(PROBLEM_TYPE).jsonBody(problem("unknown-game", 404, OPEN.unknown_game)))
      .executeTest(async (mock) => {
        await assert.rejects(new PlayClient(mock.url, "no-such-game").deal("1"), (e) => e instanceof EngineProblem && e.status === 404);
      }));
});

describe("sealed mode: Forty Thieves deal 1", () => {
  const game = "/v1/games/forty-thieves";
  const deal = SEALED.deal as JsonObject;
  const state = deal.state as JsonObject;
  const move = SEALED.move as JsonObject;
  const moved = SEALED.moved as JsonObject;

  test("the game list says the mode, so the frontend can adapt", () =>
    interaction("sealed: the game list", "the engine in sealed mode")
      .withRequest("GET", "/v1/games")
      .willRespondWith(200, (b) =>
        b.headers(JSON_TYPE).jsonBody({ state_protection: "sealed", games: eachLike({ id: string("penguin"), name: string("Penguin") }) }),
      )
      .executeTest(async (mock) => {
        const games = (await (await fetch(`${mock.url}/v1/games`)).json()) as JsonObject;
        assert.equal(games.state_protection, "sealed");
      }));

  test("deal: signed and sealed, matched by pattern", () =>
    interaction("sealed: a deal of Forty Thieves 1", "the engine in sealed mode")
      .withRequest("POST", `${game}/deals`, (b) => b.jsonBody({ deal: "1" }))
      .willRespondWith(200, (b) =>
        b.headers(JSON_TYPE).jsonBody({ deal: "1", state: sealedState(state), legal_moves: anyMoves("move"), status: "playing" }),
      )
      .executeTest(async (mock) => {
        const dealt = await new PlayClient(mock.url, "forty-thieves").deal("1");
        assert.ok((dealt.state as JsonObject).sealed);
      }));

  test("move", () =>
    interaction("sealed: a move", "a sealed Forty Thieves deal 1")
      .withRequest("POST", `${game}/moves`, (b) =>
        b.jsonBody({ state: fromProviderState("${state}", state), move: fromProviderState("${legal_move}", move) }),
      )
      .willRespondWith(200, (b) =>
        b.headers(JSON_TYPE).jsonBody({
          state: sealedState(moved.state as JsonObject),
          legal_moves: anyMoves("move"),
          status: "playing",
          events: [{ type: "move", from: regex(PILE, String(move.from)), to: regex(PILE, String(move.to)), cards: eachLike(regex(CARD, "AD")) }],
        }),
      )
      .executeTest(async (mock) => {
        const after = await new PlayClient(mock.url, "forty-thieves").move(state, move);
        assert.equal(after.status, "playing");
      }));

  test("an illegal move is refused with 409 illegal-move", () =>
    interaction("sealed: an illegal move", "a sealed Forty Thieves game after 10 moves")
      .withRequest("POST", `${game}/moves`, (b) =>
        b.jsonBody({ state: fromProviderState("${state}", state), move: fromProviderState("${illegal_move}", move) }),
      )
      .willRespondWith(409, (b) =>
        b.headers(PROBLEM_TYPE).jsonBody(problem("illegal-move", 409, SEALED.illegal, { rule: regex(RULE, String(SEALED.illegal.rule)) })),
      )
      .executeTest(async (mock) => {
        await assert.rejects(new PlayClient(mock.url, "forty-thieves").move(state, move), (e) => e instanceof EngineProblem && e.code === "illegal-move");
      }));

  test("hint, from what the player sees", () =>
    interaction("sealed: a hint", "a sealed Forty Thieves game after 10 moves")
      .withRequest("POST", `${game}/hint`, (b) => b.jsonBody({ state: fromProviderState("${state}", state) }))
      .willRespondWith(200, (b) =>
        b.headers(JSON_TYPE).jsonBody({
          move: like({ action: regex(ACTION, "move") }),
          reason: string(String(SEALED.hint.reason)),
          stats: stats(),
          knowledge: "player",
          samples: like({ won: 0, of: 8 }),
        }),
      )
      .executeTest(async (mock) => {
        assert.equal((await new PlayClient(mock.url, "forty-thieves").hint(state)).knowledge, "player");
      }));

  test("solve, from what the player sees", () =>
    interaction("sealed: a solve", "a sealed Forty Thieves game after 10 moves")
      .withRequest("POST", `${game}/solve`, (b) =>
        b.jsonBody({ state: fromProviderState("${state}", state), limits: { max_seconds: 1 } }),
      )
      .willRespondWith(200, (b) =>
        b.headers(JSON_TYPE).jsonBody({
          result: regex(RESULT, String(SEALED.solved.result)),
          stats: stats(),
          knowledge: "player",
          samples: like({ won: 0, of: 8 }),
        }),
      )
      .executeTest(async (mock) => {
        assert.equal((await new PlayClient(mock.url, "forty-thieves").solve(state, 1)).knowledge, "player");
      }));

  test("replay: its result is signed", () =>
    interaction("sealed: a replay", "a sealed Forty Thieves game after 10 moves")
      .withRequest("POST", `${game}/replays`, (b) => b.jsonBody({ deal: "1", moves: fromProviderState("${moves}", [move]) }))
      .willRespondWith(200, (b) =>
        b.headers(JSON_TYPE).jsonBody({
          state: sealedState(SEALED.replayed.state as JsonObject),
          legal_moves: anyMoves("move"),
          status: "playing",
          moves: integer(1),
          result: like({ game: "forty-thieves", deal: "1", state_protection: "sealed", moves_sha256: regex(SHA256, "0".repeat(64)), signature: signature() }),
        }),
      )
      .executeTest(async (mock) => {
        const replayed = await new PlayClient(mock.url, "forty-thieves").replay("1", [move]);
        assert.equal((replayed.result as JsonObject).state_protection, "sealed");
      }));

  test("an unknown game is 404 unknown-game", () =>
    interaction("sealed: a deal of an unknown game", "the engine in sealed mode")
      .withRequest("POST", "/v1/games/no-such-game/deals", (b) => b.jsonBody({ deal: "1" }))
      .willRespondWith(404, (b) => b.headers(PROBLEM_TYPE).jsonBody(problem("unknown-game", 404, SEALED.unknown_game)))
      .executeTest(async (mock) => {
        await assert.rejects(new PlayClient(mock.url, "no-such-game").deal("1"), (e) => e instanceof EngineProblem && e.code === "unknown-game");
      }));
});
