"""The reference web client and the docs page, driven in headless Chromium.

The page must play through the public API alone; these tests click and drag like a
player would, and fail on any console error, failed request, or request that leaves
this host. Screenshots land in test-artifacts/.

Every test that drives Chromium (it takes ``page``) is marked slow, so ``make
test-quick`` skips them and never installs or starts a browser; the plain-HTTP checks of
the pages run in the quick loop too.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import yaml
from flask import Flask
from flask.testing import FlaskClient
from playwright.sync_api import Browser, Locator, Page, expect, sync_playwright

from service.http import create_app
from tests.app_settings import sealed_settings_for_tests
from tests.live_server import serve

from .browser_helpers import ROOT, PageWatch, install_browser, launch, screenshot

IDLE = 'body[data-busy="0"]'


@pytest.fixture(scope="module")
def base_url(app: Flask) -> Iterator[str]:
    with serve(app) as url:
        yield url


@pytest.fixture(scope="module")
def sealed_base_url() -> Iterator[str]:
    """A server in sealed mode (STATE_PROTECTION=sealed, the tests' key ring)."""
    with serve(create_app(sealed_settings_for_tests())) as url:
        yield url


@pytest.fixture(scope="session")
def chromium() -> None:
    """Debian's Chromium, installed by the project's idempotent script (a no-op when present)."""
    install_browser()


@pytest.fixture(scope="module")
def browser(chromium: None) -> Iterator[Browser]:
    """Headless Chromium for this module only: Playwright's driver and loop stop with it."""
    with sync_playwright() as playwright:
        browser = launch(playwright)
        yield browser
        browser.close()


@pytest.fixture()
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page whose console errors, failed requests and off-host requests fail the test."""
    # Reduced motion: no hover lift or pulse, so clicks need not wait for cards to settle.
    context = browser.new_context(viewport={"width": 1280, "height": 900}, reduced_motion="reduce")
    context.set_default_timeout(10_000)
    page = context.new_page()
    watch = PageWatch()
    watch.attach(page)
    yield page
    context.close()
    problems = watch.problems()
    if problems:
        pytest.fail("the page misbehaved:\n" + "\n".join(problems))


# ---- driving the page -------------------------------------------------------------------


def open_deal(page: Page, base_url: str, game: str, deal: int | str, autoplay: bool = False) -> None:
    page.goto(f"{base_url}/play?game={game}&deal={deal}")
    page.wait_for_selector(IDLE)
    expect(page.locator("#status")).to_contain_text(f"deal {deal}")
    page.locator("#autoplay-toggle").set_checked(autoplay)


def pile(page: Page, ref: str) -> Locator:
    return page.locator(f'.pile[data-pile="{ref}"]')


def top_cards(page: Page, ref: str) -> list[str]:
    return pile(page, ref).locator(".card").evaluate_all("cards => cards.map(c => c.dataset.card)")


def moves_made(page: Page) -> int:
    return int(page.locator("#move-count").inner_text())


def wait_idle(page: Page) -> None:
    page.wait_for_selector(IDLE)


def card_of(page: Page, ref: str, count: int) -> Locator:
    """The card that picks up ``count`` cards from the top of pile ``ref``."""
    n = int(pile(page, ref).get_attribute("data-count") or 0)
    return pile(page, ref).locator(f'.card[data-index="{n - count}"]')


def click_move(page: Page, move: dict[str, Any]) -> None:
    """Play a move of the API's notation the way a player does: card, then target pile."""
    before = moves_made(page)
    if move["action"] == "move":
        card_of(page, move["from"], move.get("count", 1)).click(position={"x": 8, "y": 8})  # its visible corner
        expect(pile(page, move["to"])).to_have_class(_has("target"))
        pile(page, move["to"]).click(position={"x": 10, "y": 10})
    else:
        page.locator("#stock-deal-button" if move["action"] == "deal" else "#redeal-button").click()
    wait_idle(page)
    expect(page.locator("#move-count")).to_have_text(str(before + 1))


def _has(name: str) -> re.Pattern[str]:
    """Matches a class attribute holding the class ``name``."""
    return re.compile(rf"(^|\s){name}(\s|$)")


def api(base_url: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    response = requests.post(base_url + path, json=body, timeout=60)
    assert response.ok, response.text
    return response.json()


# ---- the pages as plain HTTP ------------------------------------------------------------


def test_pages_and_assets_are_served_locally(client: FlaskClient) -> None:
    play = client.get("/play")
    assert play.status_code == 200 and play.mimetype == "text/html"
    assert "default-src 'self'" in play.headers["Content-Security-Policy"]
    for src in re.findall(r'(?:src|href)="(/[^"]+)"', play.get_data(as_text=True)):
        assert client.get(src).status_code == 200, src
    docs = client.get("/docs")
    assert docs.status_code == 200
    for src in re.findall(r'(?:src|href)="(/[^"]+)"', docs.get_data(as_text=True)):
        assert client.get(src).status_code == 200, src
    assert client.get("/play/assets/js/main.js").mimetype == "text/javascript"


@pytest.mark.parametrize("path", ["/play/assets/../web.py", "/play/assets/%2e%2e/web.py", "/play/assets/nope.js", "/docs/assets/../__init__.py"])
def test_no_file_outside_the_asset_folders(client: FlaskClient, path: str) -> None:
    response = client.get(path)
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"


# ---- the page in a browser ------------------------------------------------------------------


@pytest.mark.slow
def test_deal_click_drag_undo_redo(page: Page, base_url: str) -> None:
    open_deal(page, base_url, "penguin", 1)
    assert page.url.endswith("/play?game=penguin&deal=1")
    assert page.locator('.pile[data-pile^="tableau:"] .card').count() == 49
    assert page.locator(".card.playable").count() >= 7  # every tableau top card can go to a cell

    # Click the 8 of clubs, then the 9 of clubs' pile.
    assert top_cards(page, "tableau:1")[-1] == "8C"
    card_of(page, "tableau:1", 1).click()
    expect(card_of(page, "tableau:1", 1)).to_have_class(_has("selected"))
    expect(pile(page, "tableau:4")).to_have_class(_has("target"))
    pile(page, "tableau:4").click()
    wait_idle(page)
    assert top_cards(page, "tableau:4")[-2:] == ["9C", "8C"]
    assert moves_made(page) == 1

    # Drag the 3 of diamonds to the first cell; legal targets light up on the way.
    source = card_of(page, "tableau:0", 1).bounding_box()
    target = pile(page, "cell:0").bounding_box()
    assert source and target
    page.mouse.move(source["x"] + source["width"] / 2, source["y"] + source["height"] / 2)
    page.mouse.down()
    page.mouse.move(source["x"] + 40, source["y"] - 60, steps=4)
    assert page.locator(".pile.target").count() == 7  # the seven empty cells
    assert page.locator(".drag-ghost .card").count() == 1
    page.mouse.move(target["x"] + target["width"] / 2, target["y"] + target["height"] / 2, steps=6)
    expect(pile(page, "cell:0")).to_have_class(_has("drop-over"))
    page.mouse.up()
    wait_idle(page)
    assert top_cards(page, "cell:0") == ["3D"]
    assert moves_made(page) == 2
    assert page.locator(".drag-ghost").count() == 0
    screenshot(page, "penguin-in-progress")

    page.locator("#undo-button").click()
    assert top_cards(page, "cell:0") == []
    assert top_cards(page, "tableau:0")[-1] == "3D"
    assert moves_made(page) == 1
    page.locator("#redo-button").click()
    assert top_cards(page, "cell:0") == ["3D"]
    page.keyboard.press("Control+z")
    assert top_cards(page, "cell:0") == []
    assert moves_made(page) == 1
    expect(page.locator("#redo-button")).to_be_enabled()


@pytest.mark.slow
def test_illegal_drop_changes_nothing(page: Page, base_url: str) -> None:
    open_deal(page, base_url, "penguin", 1)
    card = card_of(page, "tableau:0", 1)
    card.drag_to(pile(page, "tableau:5"))  # 3D on 2H: not in suit, so not a target
    wait_idle(page)
    assert moves_made(page) == 0
    assert top_cards(page, "tableau:0")[-1] == "3D"
    assert page.locator(".pile.target, .card.selected").count() == 0


def foundation_cards(page: Page) -> int:
    counts = page.locator('.pile[data-pile^="foundation:"]').evaluate_all("piles => piles.map(p => Number(p.dataset.count))")
    return sum(counts)


@pytest.mark.slow
def test_autoplay_toggle_and_double_click(page: Page, base_url: str) -> None:
    open_deal(page, base_url, "penguin", 1, autoplay=True)
    assert foundation_cards(page) == 3
    click_move(page, {"action": "move", "from": "tableau:5", "to": "cell:0", "count": 1})
    assert foundation_cards(page) == 4  # the 2H moved off the QS, and autoplay sent the QS home
    assert moves_made(page) == 1

    open_deal(page, base_url, "small-billee", 5, autoplay=False)
    assert top_cards(page, "cell:1") == ["2D"]
    card_of(page, "cell:1", 1).dblclick()  # a double click sends a card home
    wait_idle(page)
    assert top_cards(page, "cell:1") == []
    assert foundation_cards(page) == 5
    assert moves_made(page) == 1


@pytest.mark.slow
def test_hint_is_highlighted(page: Page, base_url: str) -> None:
    open_deal(page, base_url, "penguin", 1)
    page.locator("#hint-button").click()
    wait_idle(page)
    expect(page.locator(".card.hint-from").first).to_be_visible()
    expect(page.locator(".pile.hint-to")).to_have_count(1)
    expect(page.locator("#message")).to_contain_text("Hint")


def position_key(state: dict[str, Any]) -> str:
    return json.dumps([state["piles"], state["counters"]], sort_keys=True)


@pytest.mark.slow
def test_a_hint_never_leads_back_to_a_position_of_the_game(page: Page, base_url: str) -> None:
    """Penguin deal 2, played by its hints as the page plays them (no autoplay), up to the
    first position where the plain hint would bring back a position of the game: there the
    page asks again with that move in ``avoid``, and shows the other move."""
    hint_path = "/v1/games/penguin/hint"
    answer = api(base_url, "/v1/games/penguin/deals", {"deal": 2})
    had, path = {position_key(answer["state"])}, []
    for _ in range(200):
        plain = api(base_url, hint_path, {"state": answer["state"]})["move"]
        after = api(base_url, "/v1/games/penguin/moves", {"state": answer["state"], "move": plain, "autoplay": "none"})
        if position_key(after["state"]) in had:
            break
        path.append(plain)
        answer = after
        had.add(position_key(answer["state"]))
    else:
        pytest.fail("the plain hints of Penguin deal 2 never lead back within 200 moves")
    avoiding = api(base_url, hint_path, {"state": answer["state"], "avoid": [plain]})["move"]
    assert avoiding != plain
    open_deal(page, base_url, "penguin", 2)
    for move in path:
        click_move(page, move)
    page.locator("#hint-button").click()
    wait_idle(page)
    expect(page.locator("#message")).to_contain_text("avoids the 1 move(s) asked")
    expect(pile(page, avoiding["to"])).to_have_class(_has("hint-to"))
    count = avoiding.get("count", 1)
    expect(card_of(page, avoiding["from"], count)).to_have_class(_has("hint-from"))
    assert (avoiding["from"], avoiding["to"]) != (plain["from"], plain["to"])


@pytest.mark.slow
def test_play_a_winnable_deal_to_won(page: Page, base_url: str) -> None:
    """Abandon Hope deal 1, won by clicks (redeals included): the solver's answer says what to click."""
    game, deal = "abandon-hope", 1
    dealt = api(base_url, f"/v1/games/{game}/deals", {"deal": deal})
    answer = api(base_url, f"/v1/games/{game}/solve", {"state": dealt["state"], "limits": {"max_seconds": 30}})
    assert answer["result"] == "solved"
    open_deal(page, base_url, game, deal)
    for move in answer["moves"]:
        click_move(page, move)
    expect(page.locator("#overlay")).to_be_visible()
    expect(page.locator("#overlay-title")).to_have_text("You won!")
    assert page.locator("body").get_attribute("data-status") == "won"
    screenshot(page, "won")
    page.keyboard.press("Escape")  # close the end screen to look at the board
    expect(page.locator("#overlay")).to_be_hidden()
    expect(page.locator("#status")).to_contain_text("won")


@pytest.mark.slow
def test_no_moves_left_screen(page: Page, base_url: str) -> None:
    """Small Billee deal 3 is lost within a few moves when every redeal is taken at once."""
    game, deal = "small-billee", 3
    answer = api(base_url, f"/v1/games/{game}/deals", {"deal": deal})
    path = []
    while answer["status"] == "playing":
        move = next((m for m in answer["legal_moves"] if m["action"] != "move"), answer["legal_moves"][0])
        path.append(move)
        answer = api(base_url, f"/v1/games/{game}/moves", {"state": answer["state"], "move": move})
    assert answer["status"] == "lost" and len(path) < 20
    open_deal(page, base_url, game, deal)
    for move in path:
        click_move(page, move)
    expect(page.locator("#overlay-title")).to_have_text("No moves left")
    page.locator("#overlay-undo").click()
    expect(page.locator("#overlay")).to_be_hidden()
    assert moves_made(page) == len(path) - 1


@pytest.mark.slow
def test_solve_button_plays_the_solution(page: Page, base_url: str) -> None:
    open_deal(page, base_url, "abandon-hope", 2)
    page.locator("#solve-button").click()
    expect(page.locator("#message")).to_contain_text("Solution found")
    expect(page.locator("#overlay-title")).to_have_text("You won!", timeout=60_000)
    page.locator("#overlay-undo").click()  # the solution's moves are in the history like any others
    assert page.locator("body").get_attribute("data-status") == "playing"


@pytest.mark.slow
def test_solve_says_when_a_deal_is_lost(page: Page, base_url: str) -> None:
    open_deal(page, base_url, "small-billee", 12)  # the solver proves this deal unwinnable
    page.locator("#solve-button").click()
    expect(page.locator("#message")).to_contain_text("cannot be won")
    assert moves_made(page) == 0


@pytest.mark.slow
def test_random_deal_is_shareable(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/play?game=no-such-game")
    wait_idle(page)
    expect(page.locator("#message")).to_contain_text('No game "no-such-game"')
    page.locator("#game-select").select_option("boomerang")
    page.locator("#random-button").click()
    wait_idle(page)
    deal = page.locator("#deal-input").input_value()
    assert re.fullmatch(r"[0-9]+", deal)
    assert page.url.endswith(f"/play?game=boomerang&deal={deal}")
    assert page.locator('.pile[data-pile^="tableau:"]').count() == 12  # laid out from the game's metadata
    assert page.locator('.pile[data-pile="stock:0"] .card.back').count() >= 1
    page.locator("#stock-deal-button").click()  # Boomerang deals from the stock
    wait_idle(page)
    assert moves_made(page) == 1


@pytest.mark.slow
def test_sealed_mode_shows_backs_deals_and_hints(page: Page, sealed_base_url: str) -> None:
    """Sealed mode: the stock travels as a count, drawn as that many backs; clicking it
    deals, undo resends an earlier sealed state, the hint answers, and Solve says that
    the solver guessed at the face-down cards."""
    game, deal = "forty-thieves", 1
    dealt = api(sealed_base_url, f"/v1/games/{game}/deals", {"deal": deal})
    assert "stock" not in dealt["state"]["piles"] and dealt["state"]["face_down"] == {"stock": [64]}
    open_deal(page, sealed_base_url, game, deal)
    stock = pile(page, "stock:0")
    expect(stock).to_have_attribute("data-count", "64")
    expect(stock.locator(".badge")).to_have_text("64")
    assert stock.locator(".card.back").count() == 2 and stock.locator(".card.face").count() == 0
    assert page.locator('.pile[data-pile^="tableau:"] .card.face').count() == 40

    stock.click()  # clicking the stock deals one card to the waste
    wait_idle(page)
    assert moves_made(page) == 1
    expect(stock).to_have_attribute("data-count", "63")
    assert len(top_cards(page, "waste:0")) == 1
    click_move(page, {"action": "deal"})  # and so does the deal button
    expect(stock).to_have_attribute("data-count", "62")
    page.locator("#undo-button").click()
    expect(stock).to_have_attribute("data-count", "63")
    click_move(page, {"action": "deal"})  # a deal from an earlier sealed state plays
    expect(stock).to_have_attribute("data-count", "62")

    page.locator("#hint-button").click()
    wait_idle(page)
    expect(page.locator("#message")).to_contain_text("Hint")
    expect(page.locator(".hint-from").first).to_be_visible()
    screenshot(page, "sealed-forty-thieves")

    page.locator("#solve-button").click()  # a player-knowledge search: it guesses at the stock
    expect(page.locator("#message")).to_contain_text("cannot see the face-down cards")
    assert moves_made(page) == 2


@pytest.mark.slow
def test_rule_options_from_the_url_and_the_form(page: Page, base_url: str) -> None:
    page.goto(f"{base_url}/play?game=penguin&deal=1&opt.cells=4")
    wait_idle(page)
    assert page.locator('.pile[data-pile^="cell:"]').count() == 4
    page.locator("#options-button").click()
    expect(page.locator('#options-fields [name="cells"]')).to_have_value("4")
    page.locator('#options-fields [name="cells"]').fill("6")
    page.locator('#options-fields [name="runs"]').select_option("single")
    page.locator("#options-apply").click()
    wait_idle(page)
    assert page.locator('.pile[data-pile^="cell:"]').count() == 6
    assert page.url.endswith("/play?game=penguin&deal=1&opt.cells=6&opt.runs=single")
    page.locator("#options-reset").click()
    wait_idle(page)
    assert page.locator('.pile[data-pile^="cell:"]').count() == 7
    assert page.url.endswith("/play?game=penguin&deal=1")


@pytest.mark.slow
def test_winnable_button_deals_a_proved_winnable_deal(page: Page, base_url: str) -> None:
    open_deal(page, base_url, "penguin", 1)
    page.locator("#winnable-button").click()
    wait_idle(page)
    expect(page.locator("#message")).to_contain_text("can be won")
    deal = page.locator("#deal-input").input_value()
    assert page.url.endswith(f"/play?game=penguin&deal={deal}")


@pytest.mark.slow
def test_docs_lists_every_operation_offline(page: Page, base_url: str) -> None:
    """Every operation of the contract (openapi.yaml) shows, and nothing loads from outside."""
    contract = yaml.safe_load((ROOT / "openapi.yaml").read_text())
    operations = [op for path in contract["paths"].values() for op in path.values() if isinstance(op, dict)]
    operation_ids = [op["operationId"] for op in operations]
    assert len(operation_ids) >= 6
    page.goto(base_url + "/docs")
    page.wait_for_selector(".opblock")
    page.wait_for_load_state("networkidle")
    for operation_id in operation_ids:
        expect(page.locator(f'.opblock .opblock-summary-operation-id:text-is("{operation_id}")')).to_have_count(1)
    screenshot(page, "docs")
