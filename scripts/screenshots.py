"""Retake the README's screenshots (docs/chat.png, replay.png, document.png,
multiple-choice.png) by using the app as a visitor would.

    python scripts/screenshots.py                      # starts the app from this checkout
    python scripts/screenshots.py --url http://127.0.0.1:7860/   # or uses a running one

It drives Debian's chromium (/usr/bin/chromium, ``apt-get install chromium``)
through Python playwright (requirements-test.txt); it never downloads a browser. Without an emoji font
(``apt-get install fonts-noto-color-emoji``) the emoji on the buttons show as
boxes. The replay picture opens ``qrecc/qrecc_test_sample.json`` by path, so
the app's data folder (``$CONVQA_DATA``) must hold it.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from load_test import not_serving, start_app, stop_app  # noqa: E402 - the one way scripts start the app

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
VIEWPORT = {"width": 1280, "height": 900}
# A turn (retrieval, reading, rewriting on a CPU) and a first start (models, index) can take minutes.
TURN_MS = 300_000
START_S = 900

DOCUMENT = ("Marie Curie was a physicist and chemist born in Warsaw in 1867. She moved to Paris in 1891 to "
            "study at the Sorbonne, where she met Pierre Curie, whom she married in 1895. Together they "
            "discovered polonium and radium. She won the Nobel Prize in Physics in 1903 and the Nobel Prize "
            "in Chemistry in 1911, and was the first person to win Nobel Prizes in two sciences.")
# QReCC test conversation 2, about goats: the collection answers it and the follow-ups lean on earlier turns.
REPLAY_CONVERSATION = "2"
CHOICE_DOCUMENT = ("The lighthouse on Skerry Point was built in 1852 after three ships were lost on the rocks in "
                   "a single winter. Its first keeper, Thomas Reid, kept the lamp burning with whale oil until "
                   "1870, when it was replaced by paraffin. The light was automated in 1984 and the keeper's "
                   "cottage is now a small museum about the shipwrecks of the coast.")
CHOICE_QUESTION = "Why was the lighthouse built?"
CHOICE_OPTIONS = ("To guide fishing boats home at night", "Ships had been wrecked on the rocks",
                  "To house a museum about the coast", "Thomas Reid asked for it")


@contextlib.contextmanager
def running_app(url: str | None):
    """The URL of the app: ``url`` as given, or one started from this checkout and stopped at the end."""
    if url:
        yield url
        return
    url, app = start_app(limit_s=START_S)
    try:
        yield url
    finally:
        stop_app(app)


def _answers(page) -> int:
    return page.locator("#chat .cqa-answer").count()


def _settled(page) -> None:
    """Wait until no event shows progress (a spinner, a timer) and the page has drawn."""
    page.wait_for_function("() => !document.querySelector('.progress-text, .eta-bar, .pending')", timeout=TURN_MS)
    page.wait_for_timeout(800)


def _one_more_answer(page, button: str) -> None:
    """Click ``button`` and wait until the chat shows one answer more and the page has drawn."""
    before = _answers(page)
    page.click(button)
    page.wait_for_function("n => document.querySelectorAll('#chat .cqa-answer').length > n", arg=before,
                           timeout=TURN_MS)
    _settled(page)


def ask(page, question: str) -> None:
    page.fill("#question textarea", question)
    _one_more_answer(page, "#ask")


def shot(page, path: Path, last: str, corner: str | None = None) -> None:
    """The page down to the element ``last`` (what lies below it is beside the point), from the top
    left of the element ``corner`` if given (to leave out an empty chat)."""
    page.mouse.move(0, 0)  # no hover look on the button last clicked
    scroll_y = page.evaluate("window.scrollY")  # boxes are in the window's coordinates, the clip in the page's
    bottom = page.locator(last).bounding_box()
    x, y = 0, 0
    if corner:
        start = page.locator(corner).bounding_box()
        x, y = start["x"] - 10, scroll_y + start["y"] - 16  # a wider margin would catch the chat's edge
    page.screenshot(path=path, full_page=True, clip={"x": x, "y": y, "width": VIEWPORT["width"] - x,
                                                     "height": scroll_y + bottom["y"] + bottom["height"] + 24 - y})


def open_page(browser, url: str):
    page = browser.new_page(viewport=VIEWPORT)
    page.set_default_timeout(TURN_MS)
    page.goto(url)
    page.wait_for_selector("#question textarea")
    _settled(page)
    return page


def chat(page, out: Path) -> None:
    for question in ("Who was Ada Lovelace?", "What did she write about?", "What is she often considered to be?"):
        ask(page, question)
    # A correction of the last rewrite becomes its reference: the turn is scored and the metrics panel fills.
    page.fill("#correction textarea", "What is Ada Lovelace often regarded as?")
    page.click("#rerun")
    page.wait_for_function("document.querySelectorAll('#metrics-table tbody tr').length > 0")
    _settled(page)
    shot(page, out / "chat.png", "body")


def replay(page, out: Path) -> None:
    page.get_by_role("tab", name="Replay").click()
    page.fill("#replay-path textarea, #replay-path input", "qrecc/qrecc_test_sample.json")
    page.click("#replay-load")
    page.wait_for_function("document.querySelector('#replay-status').innerText.includes('Loaded')")
    page.click("#replay-pick input")
    # The list labels a conversation "<id>: <first question> (<n> turns)".
    page.get_by_role("option", name=re.compile(rf"^{re.escape(REPLAY_CONVERSATION)}: ")).click()
    page.click("#replay-start")
    page.wait_for_function("document.querySelector('#cqa-status').innerText.includes('Replaying')")
    for _ in range(4):
        _one_more_answer(page, "#replay-next")
    shot(page, out / "replay.png", "body")


def document(page, out: Path) -> None:
    page.get_by_role("tab", name="Your documents").click()
    page.fill("#doc-text textarea", DOCUMENT)
    page.click("#use-document")
    page.wait_for_function("document.querySelector('#docs-status').innerText.trim().length > 0")
    _settled(page)
    ask(page, "Where was Marie Curie born?")
    ask(page, "Which prizes did she win?")
    shot(page, out / "document.png", "#docs-status")


def multiple_choice(page, out: Path) -> None:
    page.get_by_role("tab", name="Multiple choice").click()
    page.fill("#mc-doc textarea", CHOICE_DOCUMENT)
    page.fill("#mc-question textarea, #mc-question input", CHOICE_QUESTION)
    for letter, option in zip("abcd", CHOICE_OPTIONS):
        page.fill(f"#mc-{letter} textarea, #mc-{letter} input", option)
    page.click("#mc-choose")
    page.wait_for_function("document.querySelector('#mc-result').innerText.trim().length > 0")
    _settled(page)
    shot(page, out / "multiple-choice.png", "#mc-result", corner="[role=tablist]")


SHOTS = {"chat": chat, "replay": replay, "document": document, "multiple-choice": multiple_choice}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a running app to use instead of starting one from this checkout")
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="folder for the PNGs (default: docs/)")
    parser.add_argument("--only", nargs="+", choices=sorted(SHOTS), help="retake only these pictures")
    args = parser.parse_args(argv)
    if not Path(CHROMIUM).is_file():
        parser.error(f"{CHROMIUM} is missing; install Debian's chromium (apt-get install chromium)")
    from playwright.sync_api import sync_playwright  # after --help, which needs no browser

    if args.url and (problem := not_serving(args.url)):
        print(problem, file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    with running_app(args.url) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
        try:
            for name in args.only or SHOTS:
                # A fresh page per picture: each starts from a new conversation.
                page = open_page(browser, url)
                SHOTS[name](page, args.out)
                page.close()
                print(f"wrote {args.out / name}.png", flush=True)
        finally:
            browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
