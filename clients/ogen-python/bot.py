"""A bot written as a Python frontend author writes one, on openapi-generator's python client
of openapi.yaml (pydantic models on urllib3; `make clients` generates it into
clients/generated/ogen-python).

It lists the games, deals Penguin deal 1, asks for a hint and plays it, plays the first
legal move 20 times, all with `"autoplay": "safe"`, solves the position reached (with the
same autoplay), replays every move played and the solution's from the deal to `won`, and
reads an illegal move (409) as a problem. Each answer's state and moves go into the next
request as they came (a move is the generator's `Move`, a wrapper of the one move it
holds). Its enums are `(str, Enum)` classes, which f-strings write as `Status.WON`: it prints
their `.value`. tests/clients/test_bots.py checks it with `mypy --strict` (clients/ogen-python/mypy.ini)
and refuses casts, the Any type and silenced errors in it.

Usage: PYTHONPATH=clients/generated/ogen-python clients/.venv/bin/python
clients/ogen-python/bot.py http://127.0.0.1:8000. Prints what it does, and `won` last.
"""

from __future__ import annotations

import sys

from patience_engine_ogen import (
    ApiClient,
    ApiException,
    Autoplay,
    CardMove,
    Configuration,
    DealMove,
    DealNumber,
    DealRequest,
    DealResponse,
    Event,
    GameId,
    GamesApi,
    HintRequest,
    Knowledge,
    Limits,
    Move,
    MoveRequest,
    MoveResponse,
    Problem,
    ProblemCode,
    ReplayRequest,
    ReplaysApi,
    SolverApi,
    SolveRequest,
    SolveResult,
    Status,
)

GAME = GameId.PENGUIN
DEAL = 1
WANDER = 20  # first legal moves played before the solver takes over


class BotError(Exception):
    """The service answered something the bot did not expect."""


def describe(move: Move) -> str:
    """A move in words; card moves are the only ones with piles and a count."""
    held = move.actual_instance
    if isinstance(held, CardMove):
        return f"{held.count} card(s) from {held.var_from} to {held.to}"
    if isinstance(held, DealMove):
        return "deal from the stock"
    return "redeal"


def kind(event: Event) -> str:
    """An event's type (`move`, `autoplay`...)."""
    held = event.actual_instance
    return "?" if held is None else held.type


def illegal_tableau_move(legal: list[Move], piles: int) -> Move:
    """A card move between two tableau piles that is not among the legal ones."""
    listed = {(held.var_from, held.to) for move in legal if isinstance(held := move.actual_instance, CardMove)}
    for source in range(piles):
        for target in range(piles):
            pair = (f"tableau:{source}", f"tableau:{target}")
            if source != target and pair not in listed:
                return Move(CardMove(action="move", var_from=pair[0], to=pair[1], count=1))
    raise BotError("every tableau move is legal")


def refused(error: ApiException) -> ProblemCode:
    """The code of the problem a refused call answered, printed with its rule if any."""
    problem = error.data
    if not isinstance(problem, Problem):
        raise BotError(f"{error.status}: not a problem: {error.body}")
    rule = "" if problem.rule is None else f" (rule {problem.rule})"
    print(f"  {problem.status} {problem.code.value}{rule}: {problem.detail}")
    return problem.code


def main(base_url: str) -> Status:
    """Plays the game against the service at ``base_url``: the replayed game's status."""
    with ApiClient(Configuration(host=base_url)) as client:
        games, solver, replays = GamesApi(client), SolverApi(client), ReplaysApi(client)

        listed = games.list_games()
        print(f"games: {', '.join(game.id.value for game in listed.games)} ({listed.state_protection.value})")
        game = next((each for each in listed.games if each.id is GAME), None)
        if game is None:
            raise BotError(f"no game {GAME.value}")

        detail = games.get_game(game.id)
        tableau = next((group for group in detail.pile_groups if group.name == "tableau"), None)
        if tableau is None:
            raise BotError("no tableau")
        print(f"{detail.name}: {tableau.count} tableau piles")

        deal = games.deal_game(game.id, deal_request=DealRequest(deal=DealNumber(DEAL)))
        print(f"deal {deal.deal}: {deal.status.value}, {len(deal.legal_moves)} legal moves")

        hinted = solver.hint(game.id, hint_request=HintRequest(state=deal.state, autoplay=Autoplay.SAFE))
        if hinted.move is None:
            raise BotError("no hint on a fresh deal")
        print(f"hint: {describe(hinted.move)} ({hinted.reason})")

        # Every move sent, in order, for the replay; the position after the last one.
        played: list[Move] = []
        position: DealResponse | MoveResponse = deal
        following: Move | None = hinted.move
        while following is not None and len(played) <= WANDER:
            answer = games.play_move(
                game.id, move_request=MoveRequest(state=position.state, move=following, autoplay=Autoplay.SAFE),
            )
            played.append(following)
            print(f"played {describe(following)}: {', '.join(kind(event) for event in answer.events)}; {answer.status.value}")
            position = answer
            following = next(iter(position.legal_moves), None)

        solved = solver.solve(
            game.id,
            solve_request=SolveRequest(
                state=position.state, knowledge=Knowledge.FULL, autoplay=Autoplay.SAFE, limits=Limits(max_seconds=10),
            ),
        )
        if solved.result is not SolveResult.SOLVED:
            raise BotError(f"solve: {solved.result.value}, stopped by {solved.stats.stopped_by}")
        print(f"solved in {len(solved.moves)} moves, {solved.stats.states} positions")

        replay = ReplayRequest(deal=deal.state.deal, moves=[*played, *solved.moves], autoplay=Autoplay.SAFE)
        replayed = replays.replay_moves(game.id, replay_request=replay)
        print(f"replayed {replayed.moves} moves: {replayed.status.value}, result {replayed.result.status.value}")
        if replayed.result.status is not replayed.status:
            raise BotError("the replay's result and its status differ")

        illegal = illegal_tableau_move(deal.legal_moves, tableau.count)
        print(f"{describe(illegal)}:")
        try:
            games.play_move(game.id, move_request=MoveRequest(state=deal.state, move=illegal))
        except ApiException as error:
            if refused(error) is not ProblemCode.ILLEGAL_MINUS_MOVE:
                raise BotError("an illegal move should be refused as illegal-move") from error
        else:
            raise BotError(f"{describe(illegal)} was played")

        return replayed.status


if __name__ == "__main__":
    status = main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000")
    print(status.value)
    sys.exit(0 if status is Status.WON else 1)
