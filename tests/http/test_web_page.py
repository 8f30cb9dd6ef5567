"""The chat page (GET /) in headless Chromium against the real server (greedy SmolLM2).

Needs Chromium and its driver (Debian: apt install chromium chromium-driver); without them the
tests are skipped. LPX_CHROMIUM / LPX_CHROMEDRIVER override their paths.
"""
import json
import os
import pathlib
import re
import urllib.request

import pytest

webdriver = pytest.importorskip("selenium.webdriver")
from selenium.common.exceptions import TimeoutException  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402

CHROMIUM = os.environ.get("LPX_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("LPX_CHROMEDRIVER", "/usr/bin/chromedriver")

QUESTION = "What is the capital of France?"
STORY = "Write a long story about a dragon who learns to bake bread."
ANSWERED = '#messages .message.assistant[data-done="true"]'

# Records every state the page renders in the newest assistant message as [length, done, turn],
# where `turn` counts the browser's tasks (a message to self ends one). The last state of a turn
# is what stayed on screen until the next network read: what a poller could have seen. Polling
# from Python (one WebDriver round trip per look) would miss most of an answer SmolLM2 writes in
# ~50 ms; a server that sent a whole answer at once would leave no partial state on screen.
RECORDER = """
window.lpxSamples = [];
let turn = 0, ticking = false;
const tick = new MessageChannel();
tick.port1.onmessage = () => { turn++; ticking = false; };
new MutationObserver(() => {
  const answers = document.querySelectorAll('#messages .message.assistant');
  const last = answers[answers.length - 1];
  if (!last) return;
  const text = (last.querySelector('.content') || last).textContent;
  window.lpxSamples.push([text.length, last.dataset.done === 'true', turn]);
  if (!ticking) { ticking = true; tick.port2.postMessage(null); }
}).observe(document.getElementById('messages'),
           {childList: true, subtree: true, characterData: true, attributes: true});
"""


def partial_lengths(samples, final, shown_only):
    """Distinct non-empty lengths below `final` rendered before the end (`shown_only`: that
    stayed on screen until a later task)."""
    if shown_only:
        samples = {turn: (length, done, turn) for length, done, turn in samples}.values()
    return {length for length, done, _ in samples if not done and 0 < length < final}


@pytest.fixture(scope="module")
def browser():
    missing = [path for path in (CHROMIUM, CHROMEDRIVER) if not pathlib.Path(path).exists()]
    if missing:
        pytest.skip(f"{' and '.join(missing)} missing: the web page test needs Chromium and "
                    "chromedriver (Debian: apt install chromium chromium-driver)")
    options = Options()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    yield driver
    driver.quit()


def open_page(browser, server):
    browser.get(server.url + "/")
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "prompt").is_enabled())
    browser.execute_script(RECORDER)


def wait_for_answers(browser, server, count, timeout=60):
    """The count-th finished assistant message; on timeout, fails showing the page and the log."""
    try:
        WebDriverWait(browser, timeout, poll_frequency=0.05).until(
            lambda d: len(d.find_elements(By.CSS_SELECTOR, ANSWERED)) >= count)
    except TimeoutException:
        shown = [(m.get_attribute("class"), m.text)
                 for m in browser.find_elements(By.CSS_SELECTOR, "#messages .message")]
        notice = browser.find_element(By.ID, "notice").text
        pytest.fail(f"no finished answer {count} within {timeout} s; messages {shown}, "
                    f"notice {notice!r}; server log:\n{server.log()[-4000:]}")
    return browser.find_elements(By.CSS_SELECTOR, ANSWERED)[count - 1]


def test_question_streams_into_an_answer_with_stats(browser, server):
    with urllib.request.urlopen(server.url + "/v1/models", timeout=10) as res:
        model_id = json.load(res)["data"][0]["id"]
    open_page(browser, server)
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.ID, "model").text == model_id)

    browser.find_element(By.ID, "prompt").send_keys(QUESTION)
    browser.find_element(By.ID, "send").click()
    answer = wait_for_answers(browser, server, 1)

    assert "Paris" in answer.text, answer.text
    user = browser.find_elements(By.CSS_SELECTOR, "#messages .message.user")
    assert [u.text for u in user] == [QUESTION]
    assert browser.find_element(By.ID, "prompt").get_attribute("value") == ""
    assert browser.find_element(By.ID, "send").is_enabled()
    assert not browser.find_element(By.ID, "stop").is_enabled()

    # The page rendered the answer delta by delta. (Whether the deltas also arrived apart in time
    # is checked on a longer answer below: under load, a starved browser may read all 8 at once.)
    samples = browser.execute_script("return window.lpxSamples")
    final = max(length for length, _, _ in samples)
    assert len(partial_lengths(samples, final, shown_only=False)) >= 2, samples

    stats = answer.find_element(By.CLASS_NAME, "stats")
    assert stats.is_displayed()
    # From the usage chunk (no "~"): TTFT, decode speed, token count.
    assert re.fullmatch(r"TTFT \d+ ms · [\d.]+ tokens/s · \d+ tokens", stats.text), stats.text


def test_long_answer_streams_and_stop_ends_it(browser, server):
    open_page(browser, server)
    browser.find_element(By.ID, "prompt").send_keys(STORY)
    browser.find_element(By.ID, "send").click()

    # Poll every 20 ms until three partial answers have stayed on screen, then stop the story.
    def progress(d):
        samples = d.execute_script("return window.lpxSamples")
        ended = any(done for _, done, _ in samples)
        return (ended or len(partial_lengths(samples, float("inf"), shown_only=True)) >= 3
                ) and samples
    samples = WebDriverWait(browser, 60, poll_frequency=0.02).until(
        progress, "no three partial answers within 60 s")
    assert not any(done for _, done, _ in samples), \
        f"the story ended before three partial answers were on screen: {samples}"

    browser.find_element(By.ID, "stop").click()
    answer = wait_for_answers(browser, server, 1, timeout=10)
    stats = answer.find_element(By.CLASS_NAME, "stats").text
    assert stats.endswith("stopped"), stats
    assert browser.find_element(By.ID, "send").is_enabled()
    assert not browser.find_element(By.ID, "stop").is_enabled()


def test_enter_sends_shift_enter_breaks_the_line_new_chat_clears(browser, server):
    open_page(browser, server)
    prompt = browser.find_element(By.ID, "prompt")
    prompt.send_keys(QUESTION, Keys.SHIFT, Keys.ENTER, Keys.SHIFT, "Answer in one word.")
    assert prompt.get_attribute("value") == QUESTION + "\nAnswer in one word."
    assert browser.find_elements(By.CSS_SELECTOR, "#messages .message") == []

    prompt.send_keys(Keys.ENTER)
    answer = wait_for_answers(browser, server, 1)
    assert answer.text.strip()
    user = browser.find_element(By.CSS_SELECTOR, "#messages .message.user")
    assert user.text == QUESTION + "\nAnswer in one word."

    browser.find_element(By.ID, "new-chat").click()
    assert browser.find_elements(By.CSS_SELECTOR, "#messages .message") == []
    assert browser.find_element(By.ID, "send").is_enabled()
