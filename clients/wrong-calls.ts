/**
 * Calls a frontend author could get wrong, on the openapi-typescript + openapi-fetch client
 * (clients/generated/ts/schema.d.ts). A line that ends with a "wrong" comment is one
 * mistake, which must be a type error on that very line; every other line must type-check.
 * It proves that the contract types its requests tightly enough for the checker to catch
 * them (an `allOf` wrapper or a loose union would make `{}` or any object a valid move, and
 * the line would compile). A line that ends with a "gap" comment is a mistake the checker
 * is known to miss, for a reason outside the contract: it must type-check, so that the day
 * it stops compiling (the tool fixed) the file is brought up to date.
 * tests/clients/test_wrong_calls.py runs tsc on it (clients/tsconfig.wrong-calls.json:
 * the bot's settings) and compares tsc's error lines with the marked ones.
 *
 * Only type-checked, never run: the answers it reads are declared, not fetched.
 */
import createClient from "openapi-fetch";
import type { components, paths } from "./generated/ts/schema.js";

type Schemas = components["schemas"];

declare const dealt: Schemas["DealResponse"];
declare const played: Schemas["MoveResponse"];
declare const hinted: Schemas["HintResponse"];
declare const solved: Schemas["SolveResponse"];
declare const replayed: Schemas["ReplayResponse"];
declare const move: Schemas["Move"];
declare const event: Schemas["Event"];

const api = createClient<paths>({ baseUrl: "http://127.0.0.1:8000" });
const game: Schemas["GameId"] = "penguin";
const path = { params: { path: { game_id: game } } };
const state = dealt.state;

export async function wrongCalls(): Promise<void> {
  // Right: the calls the wrong ones below change one thing in (none may error).
  await api.POST("/v1/games/{game_id}/deals", { ...path, body: { deal: 1 } });
  await api.POST("/v1/games/{game_id}/deals", { ...path, body: { deal: "1", options: { reserve: 1 } } });
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move, autoplay: "safe" } });
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state: played.state, move: { action: "move", from: "tableau:0", to: "cell:0", count: 1 } } });
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state: replayed.state, move: { action: "deal" } } });
  await api.POST("/v1/games/{game_id}/solve", { ...path, body: { state, knowledge: "full", autoplay: "safe", limits: { max_seconds: 1 } } });
  await api.POST("/v1/games/{game_id}/hint", { ...path, body: { state, knowledge: "player", autoplay: "none" } });
  await api.POST("/v1/games/{game_id}/replays", { ...path, body: { deal: state.deal, moves: [...dealt.legal_moves, ...solved.moves], autoplay: "none" } });
  await api.POST("/v1/games/{game_id}/legal-moves", { ...path, body: { state: { ...state, counters: {} } } });
  if (hinted.move !== null) {
    await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: hinted.move } });
  }

  // A move that is not a move.
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: "move" } }); // wrong: a move given as a string
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: 42 } }); // wrong: a move given as a number
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: {} } }); // wrong: a move given as {}
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: null } }); // wrong: a move given as null
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: { action: "jump", from: "tableau:0", to: "cell:0", count: 1 } } }); // wrong: an action no move has
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: { action: "move", from: "tableau:0", to: "cell:0" } } }); // wrong: a card move without its count
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: { action: "move", from: "tableau:0", to: "cell:0", count: "1" } } }); // wrong: a count given as a string
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: { action: "move", from: 0, to: "cell:0", count: 1 } } }); // wrong: a pile given as a number
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: { action: "deal", from: "stock:0" } } }); // wrong: a deal move with a card move's field
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: { from: "tableau:0", to: "cell:0", count: 1 } } }); // wrong: a move without its action
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: { action: "move", from: "tableau:0", to: "cell:0", count: 1, cards: ["TH"] } } }); // wrong: a move with an event's field

  // Something else where a move goes.
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: dealt.state } }); // wrong: a state where a move goes
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: dealt.legal_moves } }); // wrong: a deal answer's legal_moves where one move goes
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: solved.moves } }); // wrong: a solution's moves where one move goes
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: hinted.move } }); // wrong: a hint's move, which may be null, where a move goes
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: hinted } }); // wrong: a hint answer where its move goes
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: event } }); // wrong: an event where a move goes
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move: dealt.legal_moves[0] } }); // wrong: a listed move that may be absent (noUncheckedIndexedAccess)

  // Something else where a state goes.
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state: move, move } }); // wrong: a move where a state goes
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state: dealt, move } }); // wrong: a deal answer where its state goes
  await api.POST("/v1/games/{game_id}/legal-moves", { ...path, body: { state: JSON.stringify(state) } }); // wrong: a state as a JSON string
  await api.POST("/v1/games/{game_id}/legal-moves", { ...path, body: { state: { ...state, game: "klondike" } } }); // wrong: a state of a game the service does not have
  await api.POST("/v1/games/{game_id}/legal-moves", { ...path, body: { state: { ...state, format: 2 } } }); // wrong: a state format other than 1
  await api.POST("/v1/games/{game_id}/legal-moves", { ...path, body: { state: { ...state, deal: true } } }); // wrong: a deal number given as a boolean
  await api.POST("/v1/games/{game_id}/legal-moves", { ...path, body: { state: { ...state, piles: { tableau: ["TH"] } } } }); // wrong: a pile given as a card, not a list of cards
  await api.POST("/v1/games/{game_id}/legal-moves", { ...path, body: { state: { ...state, counters: { redeals: "1" } } } }); // wrong: a counter given as a string
  await api.POST("/v1/games/{game_id}/legal-moves", { ...path, body: { state: { ...state, options: { reserve: true } } } }); // wrong: an option given as a boolean

  // Wrong enum values.
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move, autoplay: "all" } }); // wrong: autoplay neither none nor safe
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move, autoplay: true } }); // wrong: autoplay given as a boolean
  await api.POST("/v1/games/{game_id}/replays", { ...path, body: { deal: 1, moves: [move], autoplay: "SAFE" } }); // wrong: an autoplay value in capitals
  await api.POST("/v1/games/{game_id}/solve", { ...path, body: { state, autoplay: "always" } }); // wrong: autoplay neither none nor safe, on a solve
  await api.POST("/v1/games/{game_id}/hint", { ...path, body: { state, autoplay: true } }); // wrong: autoplay given as a boolean, on a hint
  await api.POST("/v1/games/{game_id}/solve", { ...path, body: { state, autoplay: "full" } }); // wrong: a knowledge value where autoplay goes
  await api.POST("/v1/games/{game_id}/solve", { ...path, body: { state, knowledge: "partial" } }); // wrong: knowledge neither player nor full
  await api.POST("/v1/games/{game_id}/hint", { ...path, body: { state, knowledge: "everything" } }); // wrong: knowledge neither player nor full, on a hint
  await api.POST("/v1/games/{game_id}/deals", { params: { path: { game_id: "klondike" } }, body: { deal: 1 } }); // wrong: a game id the service does not have
  if (replayed.status === "win") { return; } // wrong: a status no answer has
  if (replayed.result.status === "solved") { return; } // wrong: a solve result where a replay's status is read
  if (solved.result === "won") { return; } // wrong: a replay status where a solve result is read
  if (event.type === "refill") { return; } // wrong: an event type no event has

  // Wrong shapes elsewhere.
  await api.POST("/v1/games/{game_id}/replays", { ...path, body: { deal: 1, moves: [1, "x", true] } }); // wrong: a replay's moves that are not moves
  await api.POST("/v1/games/{game_id}/replays", { ...path, body: { deal: 1, moves: move } }); // wrong: one move where the list of moves goes
  await api.POST("/v1/games/{game_id}/replays", { ...path, body: { deal: 1, moves: played.events } }); // wrong: events where moves go
  await api.POST("/v1/games/{game_id}/replays", { ...path, body: { deal: state, moves: [move] } }); // wrong: a state where the deal number goes
  await api.POST("/v1/games/{game_id}/deals", { ...path, body: { deal: [1] } }); // wrong: a deal number given as a list
  await api.POST("/v1/games/{game_id}/deals", { ...path, body: { deal: 1, winnable: "yes" } }); // wrong: winnable given as a string
  await api.POST("/v1/games/{game_id}/solve", { ...path, body: { state, limits: { max_seconds: "2" } } }); // wrong: a limit given as a string

  // Missing required fields and parameters.
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { move } }); // wrong: a move request without its state
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state } }); // wrong: a move request without its move
  await api.POST("/v1/games/{game_id}/replays", { ...path, body: { moves: [move] } }); // wrong: a replay without its deal
  await api.POST("/v1/games/{game_id}/replays", { ...path, body: { deal: 1 } }); // wrong: a replay without its moves
  await api.POST("/v1/games/{game_id}/solve", { ...path, body: { knowledge: "full" } }); // wrong: a solve request without its state
  await api.POST("/v1/games/{game_id}/legal-moves", { ...path, body: { state: { ...state, piles: undefined } } }); // wrong: a state without its piles
  await api.POST("/v1/games/{game_id}/moves", { body: { state, move } }); // wrong: no game id in the path
  await api.POST("/v1/games/{game_id}/move", { ...path, body: { state, move } }); // wrong: a path the contract does not have
  await api.GET("/v1/games/{game_id}/deals", path); // wrong: a method the path does not have

  // A property the contract does not have, in a body: openapi-fetch infers the call's
  // options as a type parameter, so TypeScript checks them against the contract's type
  // without its excess-property check (openapi-ts/openapi-typescript issues 1769, 2329;
  // only a union member, as a move is, still gets one). The contract says
  // `additionalProperties: false` and the service answers 400; `satisfies` with the
  // request's schema restores the check at compile time.
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move, auto_play: "safe" } }); // gap: a misspelt optional field
  await api.POST("/v1/games/{game_id}/solve", { ...path, body: { state, limits: { seconds: 2 } } }); // gap: a limit the contract does not have
  await api.POST("/v1/games/{game_id}/moves", { ...path, body: { state, move, auto_play: "safe" } satisfies Schemas["MoveRequest"] }); // wrong: a misspelt optional field
  await api.POST("/v1/games/{game_id}/solve", { ...path, body: { state, limits: { seconds: 2 } } satisfies Schemas["SolveRequest"] }); // wrong: a limit the contract does not have
  await api.POST("/v1/games/{game_id}/solve", { ...path, body: { state, max_seconds: 2 } satisfies Schemas["SolveRequest"] }); // wrong: a limit outside limits
  await api.POST("/v1/games/{game_id}/legal-moves", { ...path, body: { state: { ...state, stock: [] } } satisfies Schemas["StateRequest"] }); // wrong: a pile group outside piles

  // Answers read wrong.
  const count: number = dealt.deal; // wrong: the answer's deal number is a string
  const first: Schemas["Move"] = played.legal_moves[0]; // wrong: a listed move may be absent (noUncheckedIndexedAccess)
  const hint: Schemas["Move"] = hinted.move; // wrong: a hint's move may be null
  const from: string = move.from; // wrong: only card moves have piles
  console.log(count, first, hint, from, dealt.legalMoves); // wrong: an answer's field by a name it does not have
}
