/**
 * A bot written as a frontend author writes one, on the client that `make clients`
 * generates from openapi.yaml (openapi-typescript's types, openapi-fetch's calls).
 *
 * It lists the games, deals Penguin deal 1, asks for a hint and plays it, plays the first
 * legal move 20 times, all with `"autoplay": "safe"`, solves the position reached (with the
 * same autoplay), replays every move played and the solution's from the deal to `won`, and
 * reads an illegal move (409) and an inconsistent state (422) as typed problems. Each
 * answer's state and moves go into the next request as they came, as a frontend's do. It
 * is the proof that the contract needs no cast: tests/clients/test_bots.py type-checks it
 * with `tsc --strict` (exactOptionalPropertyTypes and noUncheckedIndexedAccess on:
 * clients/tsconfig.json) and refuses casts, non-null assertions and the escape type in it.
 *
 * Usage: node generated/build/bot.js http://127.0.0.1:8000 (built by tests/clients, or
 * `npx tsc --noEmit false` in clients/). Prints what it does, and `won` last.
 */
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/ts/schema.js";

type Schemas = components["schemas"];
type GameId = Schemas["GameId"];
type Move = Schemas["Move"];
type CardMove = Schemas["CardMove"];
type State = Schemas["State"];
type Status = Schemas["Status"];
type Problem = Schemas["Problem"];
type Position = Pick<Schemas["MoveResponse"], "state" | "legal_moves" | "status">;
type ProblemCode = Schemas["ProblemCode"];

const GAME: GameId = "penguin";
const DEAL = 1;
// First legal moves played before the solver takes over.
const WANDER = 20;

/** Stops the bot with what went wrong. */
function fail(what: string): never {
  throw new Error(what);
}

/** A move in words; card moves are the only ones with piles and a count. */
function describe(move: Move): string {
  switch (move.action) {
    case "move":
      return `${move.count} card(s) from ${move.from} to ${move.to}`;
    case "deal":
      return "deal from the stock";
    case "redeal":
      return "redeal";
  }
}

/** A problem's code, with its rule when the rules refused a move. */
function explain(problem: Problem): ProblemCode {
  const rule = problem.rule === undefined ? "" : ` (rule ${problem.rule})`;
  console.log(`  ${problem.status} ${problem.code}${rule}: ${problem.detail}`);
  return problem.code;
}

/** A card move between two tableau piles that is not among the legal ones: the rules refuse it. */
function illegalTableauMove(legal: Move[], piles: number): CardMove {
  for (let from = 0; from < piles; from++) {
    for (let to = 0; to < piles; to++) {
      const candidate: CardMove = { action: "move", from: `tableau:${from}`, to: `tableau:${to}`, count: 1 };
      const listed = legal.some(
        (move) => move.action === "move" && move.from === candidate.from && move.to === candidate.to,
      );
      if (from !== to && !listed) {
        return candidate;
      }
    }
  }
  return fail("every tableau move is legal");
}

/** The state with the top card of its second tableau pile copied onto the first: a card twice. */
function withCardTwice(state: State): State {
  const [first, second, ...rest] = state.piles.tableau ?? [];
  const copied = second?.at(-1);
  if (first === undefined || second === undefined || copied === undefined) {
    return fail("the deal has no two tableau piles with cards");
  }
  return { ...state, piles: { ...state.piles, tableau: [[...first, copied], second, ...rest] } };
}

/** Plays the game against the service at `baseUrl`: the replayed game's status. */
async function main(baseUrl: string): Promise<Status> {
  const api = createClient<paths>({ baseUrl });

  const listed = await api.GET("/v1/games");
  if (listed.data === undefined) {
    return fail(`list_games answered ${listed.response.status}`);
  }
  const game = listed.data.games.find((each) => each.id === GAME) ?? fail(`no game ${GAME}`);
  console.log(`games: ${listed.data.games.map((each) => each.id).join(", ")} (${listed.data.state_protection})`);
  const path = { params: { path: { game_id: game.id } } };

  const detail = await api.GET("/v1/games/{game_id}", path);
  if (detail.data === undefined) {
    return fail(`get_game answered ${detail.response.status}`);
  }
  const tableau = detail.data.pile_groups.find((group) => group.name === "tableau") ?? fail("no tableau");
  console.log(`${detail.data.name}: ${tableau.count} tableau piles`);

  const dealt = await api.POST("/v1/games/{game_id}/deals", { ...path, body: { deal: DEAL } });
  if (dealt.data === undefined) {
    return fail(`deal_game answered ${dealt.response.status}`);
  }
  const deal = dealt.data;
  console.log(`deal ${deal.deal}: ${deal.status}, ${deal.legal_moves.length} legal moves`);

  const hinted = await api.POST("/v1/games/{game_id}/hint", {
    ...path,
    body: { state: deal.state, autoplay: "safe" },
  });
  if (hinted.data === undefined) {
    return fail(`hint answered ${hinted.response.status}`);
  }
  const advice = hinted.data.move;
  if (advice === null) {
    return fail("no hint on a fresh deal");
  }
  console.log(`hint: ${describe(advice)} (${hinted.data.reason})`);

  // Every move sent, in order, for the replay; the position after the last one.
  const played: Move[] = [];
  let position: Position = deal;
  for (let next: Move | undefined = advice; next !== undefined && played.length <= WANDER; ) {
    const answer = await api.POST("/v1/games/{game_id}/moves", {
      ...path,
      body: { state: position.state, move: next, autoplay: "safe" },
    });
    if (answer.data === undefined) {
      return fail(`play_move ${describe(next)} answered ${answer.response.status}`);
    }
    played.push(next);
    position = answer.data;
    console.log(`played ${describe(next)}: ${answer.data.events.map((event) => event.type).join(", ")}; ${position.status}`);
    [next] = position.legal_moves;
  }

  const solved = await api.POST("/v1/games/{game_id}/solve", {
    ...path,
    body: { state: position.state, knowledge: "full", autoplay: "safe", limits: { max_seconds: 10 } },
  });
  if (solved.data === undefined) {
    return fail(`solve answered ${solved.response.status}`);
  }
  if (solved.data.result !== "solved") {
    return fail(`solve: ${solved.data.result}, stopped by ${solved.data.stats.stopped_by}`);
  }
  console.log(`solved in ${solved.data.moves.length} moves, ${solved.data.stats.states} positions`);

  const replayed = await api.POST("/v1/games/{game_id}/replays", {
    ...path,
    body: { deal: deal.deal, moves: [...played, ...solved.data.moves], autoplay: "safe" },
  });
  if (replayed.data === undefined) {
    return fail(`replay_moves answered ${replayed.response.status}`);
  }
  console.log(`replayed ${replayed.data.moves} moves: ${replayed.data.status}, result ${replayed.data.result.status}`);
  if (replayed.data.result.status !== replayed.data.status) {
    return fail("the replay's result and its status differ");
  }

  const illegal = illegalTableauMove(deal.legal_moves, tableau.count);
  const refused = await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state: deal.state, move: illegal } });
  if (refused.error === undefined) {
    return fail(`${describe(illegal)} was played`);
  }
  console.log(`${describe(illegal)}: ${refused.response.status}`);
  if (explain(refused.error) !== "illegal-move") {
    return fail("an illegal move should be refused as illegal-move");
  }

  const rejected = await api.POST("/v1/games/{game_id}/legal-moves", {
    ...path,
    body: { state: withCardTwice(deal.state) },
  });
  if (rejected.error === undefined) {
    return fail("a state with a card twice was accepted");
  }
  console.log(`a card twice: ${rejected.response.status}`);
  if (explain(rejected.error) !== "invalid-state") {
    return fail("a card twice should be refused as invalid-state");
  }

  return replayed.data.status;
}

const status = await main(process.argv[2] ?? "http://127.0.0.1:8000");
console.log(status);
if (status !== "won") {
  process.exitCode = 1;
}
