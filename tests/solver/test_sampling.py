"""Hidden information on the engine interface and the player-knowledge search over it.

The engine: what a sample may change (the face-down cards among the face-down piles, each
pile keeping its count; the deal seed only where redeals reshuffle) and what it may not
(every face-up pile, the counters); when the hidden information still matters; which moves
reveal it. The solver (service/solver/sampling.py): samples seeded from the visible
position only, budgets shared by position, ties broken by the heuristic, and solve lines
that stop before the first move that reveals anything.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from service.engine.core import REDEAL, Action, Game, Move, State
from service.engine.registry import GAME_CLASSES, get_game
from service.solver import Limits, Outcome, SolveResult
from service.solver.answers import heuristic_order
from service.solver.pool import QuietListener, Search, SolverPool
from service.solver.sampling import (
    most_won_move,
    player_hint,
    player_solve,
    positions_per_sample,
    safe_line,
    search_samples,
    visible_seed,
)
from service.solver.settings import SAMPLED_POSITIONS_PER_SECOND

HIDDEN_GAMES = ("forty-thieves", "boomerang", "amazons", "abandon-hope", "small-billee")
FULL_INFORMATION_GAMES = tuple(g for g in GAME_CLASSES if g not in HIDDEN_GAMES)
RESHUFFLING_GAMES = ("abandon-hope", "small-billee")
# Small budgets: a sample gets a few hundred positions, far less than its share of the time.
LIMITS = Limits(2.0, 2400)
SAMPLES = 6


def playout(game: Game, deal: int, moves: int, seed: int = 0, quiet: bool = False) -> list[State]:
    """The states of a random playout of deal ``deal``, up to ``moves`` moves long; with
    ``quiet``, of moves that reveal nothing (Game.move_reveals) only."""
    rng = random.Random(seed)
    states = [game.initial_state(deal)]
    for _ in range(moves):
        legal = game.legal_moves(states[-1])
        if quiet:
            legal = [m for m in legal if not game.move_reveals(states[-1], m)]
        if not legal:
            break
        states.append(game.apply(states[-1], rng.choice(legal)))
    return states


def positions(game_id: str) -> list[State]:
    """A few positions of each of two deals, from the deal on."""
    game = get_game(game_id)
    return [s for deal in (1, 2) for s in playout(game, deal, 40, deal)[::8]]


def hidden_reordered(game: Game, state: State, seed: int = 7) -> State:
    """``state`` with its face-down cards in another order and, where redeals reshuffle,
    another deal seed: the same visible position."""
    rng = random.Random(seed)
    piles = list(state.piles)
    hidden = [c for p in game.face_down_piles for c in piles[p]]
    while len(set(hidden)) > 1 and hidden == [c for p in game.face_down_piles for c in piles[p]]:
        rng.shuffle(hidden)
    for p in game.face_down_piles:
        count = len(piles[p])
        piles[p], hidden = tuple(hidden[:count]), hidden[count:]
    deal = state.deal + 1 if game.redeals_reshuffle else state.deal
    return State(tuple(piles), state.counters, deal)


# --- the engine: samples ------------------------------------------------------------------

@pytest.mark.parametrize("game_id", list(GAME_CLASSES))
def test_a_sample_keeps_every_face_up_pile_the_counters_and_each_face_down_count(game_id: str) -> None:
    game = get_game(game_id)
    rng = random.Random(1)
    for state in positions(game_id):
        sample = game.sample_hidden(state, rng)
        assert sample.counters == state.counters
        for p, (pile, sampled) in enumerate(zip(state.piles, sample.piles, strict=True)):
            assert len(sampled) == len(pile)
            if p not in game.face_down_piles:
                assert sampled == pile


@pytest.mark.parametrize("game_id", HIDDEN_GAMES)
def test_a_sample_permutes_the_face_down_cards_only_among_the_face_down_piles(game_id: str) -> None:
    game = get_game(game_id)
    rng = random.Random(2)
    moved = 0
    for state in positions(game_id):
        sample = game.sample_hidden(state, rng)
        face_down = game.face_down_piles
        assert Counter(c for p in face_down for c in sample.piles[p]) == Counter(c for p in face_down for c in state.piles[p])
        assert not game.validate(sample)
        moved += any(sample.piles[p] != state.piles[p] for p in face_down)
    if game.face_down_piles:
        assert moved  # the order does change


@pytest.mark.parametrize("game_id", HIDDEN_GAMES)
def test_a_sample_depends_on_which_cards_lie_face_down_not_on_their_order(game_id: str) -> None:
    game = get_game(game_id)
    for state in positions(game_id):
        reordered = hidden_reordered(game, state)
        assert game.sample_hidden(state, random.Random(3)) == game.sample_hidden(reordered, random.Random(3))


@pytest.mark.parametrize("game_id", list(GAME_CLASSES))
def test_a_fresh_deal_seed_only_where_redeals_reshuffle(game_id: str) -> None:
    game = get_game(game_id)
    assert game.redeals_reshuffle == (game_id in RESHUFFLING_GAMES)
    state = game.initial_state(5)
    seeds = {game.sample_hidden(state, random.Random(i)).deal for i in range(4)}
    if game_id in RESHUFFLING_GAMES:
        assert state.deal not in seeds and len(seeds) == 4
    else:
        assert seeds == {state.deal}


@pytest.mark.parametrize("game_id", FULL_INFORMATION_GAMES)
def test_full_information_games_hide_nothing(game_id: str) -> None:
    game = get_game(game_id)
    assert game.face_down_piles == ()
    for state in positions(game_id):
        assert not game.hidden_matters(state)
        assert game.sample_hidden(state, random.Random(4)) == state
        assert not any(game.move_reveals(state, m) for m in game.legal_moves(state))


# --- the engine: when hidden information matters, and which moves reveal it ------------------

def test_hidden_information_matters_while_a_face_down_card_or_a_reshuffle_is_left() -> None:
    forty = get_game("forty-thieves")
    state = forty.initial_state(1)
    assert forty.hidden_matters(state)
    emptied = list(state.piles)
    emptied[forty.group_start["waste"]] += emptied[forty.group_start["stock"]]
    emptied[forty.group_start["stock"]] = ()
    assert not forty.hidden_matters(state._replace(piles=tuple(emptied)))
    billee = get_game("small-billee")
    state = billee.initial_state(1)
    assert billee.hidden_matters(state)  # no face-down pile, but three reshuffles to come
    for _ in range(3):
        state = billee.apply(state, REDEAL)
    assert state.counters == (3,) and not billee.hidden_matters(state)


@pytest.mark.parametrize("game_id", RESHUFFLING_GAMES)
def test_a_reshuffle_that_is_not_legal_now_never_becomes_legal(game_id: str) -> None:
    """The argument of Game.hidden_matters: in the reshuffling games, a redeal not legal now
    is never legal later."""
    game = get_game(game_id)
    for seed in range(20):
        gone = False
        for state in playout(game, seed, 120, seed):
            legal = REDEAL in game.legal_moves(state)
            assert not (gone and legal)
            gone = gone or not legal


def test_a_lost_game_hides_nothing_that_matters() -> None:
    hope = get_game("abandon-hope")
    lost = next(
        s for seed in range(50) for s in playout(hope, seed, 200, seed)
        if not hope.legal_moves(s) and not hope.is_won(s) and s.piles[hope.group_start["stock"]]
    )
    assert not hope.hidden_matters(lost)


@pytest.mark.parametrize("game_id", HIDDEN_GAMES)
def test_a_move_that_does_not_reveal_plays_the_same_in_every_sample(game_id: str) -> None:
    """move_reveals is False only for moves whose outcome the hidden cards cannot change;
    every deal from a face-down pile and every reshuffle reveals."""
    game = get_game(game_id)
    rng = random.Random(5)
    for state in positions(game_id):
        samples = [game.sample_hidden(state, rng) for _ in range(3)]
        for move in game.legal_moves(state):
            if game.move_reveals(state, move):
                continue
            assert move.action != Action.DEAL and not (move.action == Action.REDEAL and game.redeals_reshuffle)
            after = game.apply(state, move)
            for sample in samples:
                played = game.apply(sample, move)
                assert [p for i, p in enumerate(played.piles) if i not in game.face_down_piles] == [
                    p for i, p in enumerate(after.piles) if i not in game.face_down_piles
                ]
                assert played.counters == after.counters


# --- the solver: seeds, budgets, choices ------------------------------------------------------

def test_the_sample_seed_reads_only_the_visible_position() -> None:
    game = get_game("forty-thieves")
    state = game.initial_state(3)
    seed = visible_seed(game, state)
    assert visible_seed(game, hidden_reordered(game, state)) == seed
    assert visible_seed(game, state._replace(deal=4)) == seed
    dealt = game.apply(state, Move(Action.DEAL))
    assert visible_seed(game, dealt) != seed  # a card turned face up, the stock one shorter
    billee = get_game("small-billee")
    start = billee.initial_state(3)
    assert visible_seed(billee, start._replace(deal=99)) == visible_seed(billee, start)
    assert visible_seed(billee, start._replace(counters=(1,))) != visible_seed(billee, start)
    opus, penguin = get_game("opus"), get_game("penguin")
    assert visible_seed(opus, opus.initial_state(1)) != visible_seed(penguin, penguin.initial_state(1))


def test_each_sample_gets_an_equal_share_of_the_positions_its_time_allows() -> None:
    assert positions_per_sample(Limits(1.0, 10**9), 8) == SAMPLED_POSITIONS_PER_SECOND // 8
    assert positions_per_sample(Limits(1.0, 800), 8) == 100
    assert positions_per_sample(Limits(0.001, 10**9), 8) == 1


@pytest.mark.parametrize("game_id", HIDDEN_GAMES)
def test_the_same_request_searches_the_same_samples(game_id: str) -> None:
    game = get_game(game_id)
    state = game.initial_state(2)
    first, again = (search_samples(game, state, LIMITS, SAMPLES) for _ in range(2))
    assert [(r.result, r.moves, r.states) for r in first.results] == [(r.result, r.moves, r.states) for r in again.results]
    assert sum(r.states for r in first.results) <= positions_per_sample(LIMITS, SAMPLES) * SAMPLES


def test_ties_between_most_won_moves_go_to_the_heuristics_order() -> None:
    a, b, c = Move(Action.MOVE, 1, 2, 1), Move(Action.MOVE, 3, 4, 1), Move(Action.DEAL)
    won = [SolveResult(Outcome.SOLVED, [m]) for m in (b, a, b, a, c)]
    pick = most_won_move([SolveResult(Outcome.UNKNOWN), *won], [c, a, b])
    assert pick is not None and (pick.move, pick.wins, pick.sample) == (a, 2, 2)
    assert most_won_move([SolveResult(Outcome.UNKNOWN)], [a]) is None


# --- the solver: player-knowledge hints and solves --------------------------------------------

@pytest.mark.parametrize("game_id", HIDDEN_GAMES)
def test_a_player_hint_is_the_same_whatever_the_hidden_order(game_id: str) -> None:
    game = get_game(game_id)
    for state in positions(game_id)[:3]:
        given, other = (player_hint(game, s, LIMITS, SAMPLES) for s in (state, hidden_reordered(game, state)))
        assert (given.move, given.reason, given.winnable, given.samples) == (other.move, other.reason, other.winnable, other.samples)
        if game.hidden_matters(state):
            assert given.winnable is None and given.samples is not None and given.samples.of == SAMPLES


@pytest.mark.parametrize("game_id", HIDDEN_GAMES)
def test_a_player_solve_answers_only_moves_that_reveal_nothing(game_id: str) -> None:
    game = get_game(game_id)
    for state in positions(game_id)[:3]:
        solved = player_solve(game, state, LIMITS, SAMPLES)
        if not game.hidden_matters(state):
            continue
        assert solved.search.result is Outcome.UNKNOWN
        assert safe_line(game, state, solved.search.moves) == solved.search.moves
        for move in solved.search.moves:
            assert game.is_legal(state, move) and not game.move_reveals(state, move)
            state = game.apply(state, move)


def test_a_player_hint_with_no_sample_won_is_the_heuristics_choice() -> None:
    game = get_game("forty-thieves")
    state = game.initial_state(1)
    given = player_hint(game, state, Limits(1.0, 8), SAMPLES)
    assert given.samples is not None and given.samples.won == 0
    view = game.sample_hidden(state, random.Random(visible_seed(game, state)))
    ordered, heuristic = heuristic_order(game, view, game.legal_moves(state))
    assert given.move == ordered[0] and heuristic in given.reason


def test_player_searches_run_in_a_solver_process_with_the_same_answer() -> None:
    """The functions pickle (module-level) and answer in a solver process as in the thread
    (a long time cap: the positions decide, however busy the machine)."""
    game = get_game("small-billee")
    args = (game.initial_state(1), Limits(20.0, LIMITS.max_states), SAMPLES)
    pool = SolverPool(1, 0, QuietListener())
    try:
        hinted = pool.run(Search(player_hint, game, args, 20.0))
        solved = pool.run(Search(player_solve, game, args, 20.0))
    finally:
        pool.close()
    here = player_hint(game, *args), player_solve(game, *args)
    assert (hinted.move, hinted.reason, hinted.samples) == (here[0].move, here[0].reason, here[0].samples)
    assert (solved.search.moves, solved.samples) == (here[1].search.moves, here[1].samples)
