/**
 * A bot written as a frontend author writes one, on openapi-generator's typescript-fetch
 * client of openapi.yaml (`make clients` generates it into clients/generated/ogen-ts and
 * compiles it to a library there; clients/package.json's "imports" names it `#ogen-ts`).
 *
 * It lists the games, deals Penguin deal 1, asks for a hint and plays it, plays the first
 * legal move 20 times, all with `"autoplay": "safe"`, solves the position reached (with the
 * same autoplay), replays every move played and the solution's from the deal to `won`, and
 * reads an illegal move (409) as a problem. Each answer's state and moves go into the next
 * request as they came (the client's own camelCase objects, which it writes back as the
 * wire's JSON). tests/clients/test_bots.py type-checks it with `tsc --strict`
 * (exactOptionalPropertyTypes and noUncheckedIndexedAccess on: tsconfig.json here) and
 * refuses casts, non-null assertions and the escape type in it.
 *
 * Usage: node ../generated/build/ogen-ts/bot.js http://127.0.0.1:8000 (built by
 * tests/clients, or `npx tsc -p ogen-ts --noEmit false` in clients/). Prints what it does,
 * and `won` last.
 */
import {
  Configuration,
  GamesApi,
  ReplaysApi,
  ResponseError,
  SolverApi,
  ProblemFromJSON,
  type CardMove,
  type GameId,
  type Move,
  type MoveResponse,
  type Problem,
  type Status,
} from "#ogen-ts";

const GAME: GameId = "penguin";
const DEAL = 1;
// First legal moves played before the solver takes over.
const WANDER = 20;

type Position = Pick<MoveResponse, "state" | "legalMoves" | "status">;

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

/** The problem a refused call answered (typescript-fetch throws a ResponseError for any
 * status but 2xx, with the response unread), printed with its rule if any. */
async function problemOf(error: unknown): Promise<Problem> {
  if (!(error instanceof ResponseError)) {
    throw error;
  }
  const problem = ProblemFromJSON(await error.response.json());
  const rule = problem.rule === undefined ? "" : ` (rule ${problem.rule})`;
  console.log(`  ${problem.status} ${problem.code}${rule}: ${problem.detail}`);
  return problem;
}

/** Plays the game against the service at `baseUrl`: the replayed game's status. */
async function main(baseUrl: string): Promise<Status> {
  const configuration = new Configuration({ basePath: baseUrl });
  const games = new GamesApi(configuration);
  const solver = new SolverApi(configuration);
  const replays = new ReplaysApi(configuration);

  const listed = await games.listGames();
  const game = listed.games.find((each) => each.id === GAME) ?? fail(`no game ${GAME}`);
  console.log(`games: ${listed.games.map((each) => each.id).join(", ")} (${listed.stateProtection})`);

  const detail = await games.getGame({ gameId: game.id });
  const tableau = detail.pileGroups.find((group) => group.name === "tableau") ?? fail("no tableau");
  console.log(`${detail.name}: ${tableau.count} tableau piles`);

  const deal = await games.dealGame({ gameId: game.id, dealRequest: { deal: DEAL } });
  console.log(`deal ${deal.deal}: ${deal.status}, ${deal.legalMoves.length} legal moves`);

  const hinted = await solver.hint({ gameId: game.id, hintRequest: { state: deal.state, autoplay: "safe" } });
  const advice = hinted.move ?? fail("no hint on a fresh deal");
  console.log(`hint: ${describe(advice)} (${hinted.reason})`);

  // Every move sent, in order, for the replay; the position after the last one.
  const played: Move[] = [];
  let position: Position = deal;
  for (let next: Move | undefined = advice; next !== undefined && played.length <= WANDER; ) {
    const answer = await games.playMove({
      gameId: game.id,
      moveRequest: { state: position.state, move: next, autoplay: "safe" },
    });
    played.push(next);
    position = answer;
    console.log(`played ${describe(next)}: ${answer.events.map((event) => event.type).join(", ")}; ${answer.status}`);
    [next] = position.legalMoves;
  }

  const solved = await solver.solve({
    gameId: game.id,
    solveRequest: { state: position.state, knowledge: "full", autoplay: "safe", limits: { maxSeconds: 10 } },
  });
  if (solved.result !== "solved") {
    return fail(`solve: ${solved.result}, stopped by ${solved.stats.stoppedBy}`);
  }
  console.log(`solved in ${solved.moves.length} moves, ${solved.stats.states} positions`);

  const replayed = await replays.replayMoves({
    gameId: game.id,
    replayRequest: { deal: deal.deal, moves: [...played, ...solved.moves], autoplay: "safe" },
  });
  console.log(`replayed ${replayed.moves} moves: ${replayed.status}, result ${replayed.result.status}`);
  if (replayed.result.status !== replayed.status) {
    return fail("the replay's result and its status differ");
  }

  const illegal = illegalTableauMove(deal.legalMoves, tableau.count);
  console.log(`${describe(illegal)}:`);
  const refused = await games.playMove({ gameId: game.id, moveRequest: { state: deal.state, move: illegal } }).then(
    () => fail(`${describe(illegal)} was played`),
    problemOf,
  );
  if (refused.code !== "illegal-move") {
    return fail("an illegal move should be refused as illegal-move");
  }

  return replayed.status;
}

const status = await main(process.argv[2] ?? "http://127.0.0.1:8000");
console.log(status);
if (status !== "won") {
  process.exitCode = 1;
}
