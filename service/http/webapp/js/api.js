// The public v1 API, exactly as any third-party client calls it. Nothing else talks to the server.

/** An answer other than 2xx: `problem` is the RFC 9457 body (or null). */
export class ApiError extends Error {
  constructor(status, problem) {
    super((problem && (problem.detail || problem.title)) || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

async function call(method, path, body) {
  const init = { method, headers: { Accept: "application/json, application/problem+json" } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  const type = response.headers.get("Content-Type") || "";
  const data = type.includes("json") ? await response.json() : null;
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
}

const game = (id) => `/v1/games/${encodeURIComponent(id)}`;

export const api = {
  /** Every game with its layout (pile groups), counters, options and actions. */
  games: () => call("GET", "/v1/games"),
  /** One game, with its rules in words. */
  game: (id) => call("GET", game(id)),
  /** A new deal: `deal` is a decimal string or omitted (random); `winnable` asks for a proved-winnable one. */
  deal: (id, { deal, options, winnable } = {}) => {
    const body = {};
    if (deal !== undefined && deal !== "") body.deal = String(deal);
    if (options && Object.keys(options).length) body.options = options;
    if (winnable) body.winnable = true;
    return call("POST", `${game(id)}/deals`, body);
  },
  /** Apply one move (one listed in `legal_moves`), with safe autoplay if asked. */
  move: (id, state, move, autoplay) =>
    call("POST", `${game(id)}/moves`, { state, move, autoplay: autoplay ? "safe" : "none" }),
  /** The solver's suggested move for a position, never one of `avoid` (moves as `legal_moves` lists them). */
  hint: (id, state, avoid = []) => call("POST", `${game(id)}/hint`, avoid.length ? { state, avoid } : { state }),
  /** A whole solution, or a proof there is none, within the server's time budget. */
  solve: (id, state) => call("POST", `${game(id)}/solve`, { state }),
};
