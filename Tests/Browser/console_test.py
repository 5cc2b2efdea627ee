"""Browser tests of the /ui console (send, campaigns, one campaign, dead tokens), in
Debian's headless Chromium driven by Selenium.

Started by Tests/PushgateCLITests/ConsoleBrowserTests.swift, which runs one pushgate server
with three API keys (admin, and the clients alpha and beta) sending to the fake APNs, which
answers --failing with 400 BadDeviceToken and --dead with 410 Unregistered:

    console_test.py --base URL --admin-key K --alpha-key K --beta-key K --failing TOKEN
                    --dead TOKEN --devices N --work DIR --artifacts DIR

Every number the page shows is compared with the API's own answer (urllib). Prints one
JSON line per case and a closing `N passed, N failed` line; exits 0 only if all passed.
"""

import argparse
import json
import os
import signal
import sys
import time
import traceback
import urllib.error
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.support.ui import Select, WebDriverWait

from ui_test import HOSTILE, Failure, check, equal, headless_chromium

TITLE = "pushgate · notification preview"


def token(prefix, n):
    digits = f"{prefix}{n:08x}"
    return digits + "0" * (64 - len(digits))


class API:
    def __init__(self, base, key):
        self.base, self.key = base, key

    def call(self, method, path, body=None, content_type="application/json", headers=None):
        data = None if body is None else (body if isinstance(body, bytes) else body.encode("utf-8"))
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", content_type)
        request.add_header("Authorization", "Bearer " + self.key)
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def get(self, path):
        status, answer = self.call("GET", path)
        check(status == 200, f"GET {path}: {status} {answer}")
        return answer

    def campaign_ids(self):
        return [c["id"] for c in self.get("/v1/campaigns?limit=1000")["campaigns"]]


class Console:
    def __init__(self, driver, base):
        self.driver, self.base = driver, base

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def text(self, element_id):
        return self.js("const e = document.getElementById(arguments[0]); return e ? e.textContent : null", element_id)

    def wait(self, condition, what, timeout=30):
        try:
            WebDriverWait(self.driver, timeout, poll_frequency=0.2).until(lambda d: condition())
        except Exception:
            raise Failure(f"timed out after {timeout} s waiting for {what}")

    def use_key(self, key):
        """Opens the page afresh with this key entered in its form (kept for the tab only)."""
        self.driver.get(self.base + "/ui")
        self.js("sessionStorage.clear()")
        self.driver.get(self.base + "/ui")
        self.wait(lambda: self.js("return document.body.dataset.ready || ''") == "key", "the key form")
        self.driver.find_element(By.ID, "key-input").send_keys(key)
        self.driver.find_element(By.ID, "key-use").click()
        self.wait(lambda: self.js("return document.body.dataset.ready") == "true", "the page to start with the key")

    def go(self, hash_):
        self.js("if (location.hash === arguments[0]) window.dispatchEvent(new HashChangeEvent('hashchange'));"
                "else location.hash = arguments[0];", hash_)

    def show(self, hash_, element_id, what, timeout=30):
        """Navigates and waits for the view's first rendering (counted from before the navigation)."""
        before = self.round(element_id)
        self.go(hash_)
        self.wait(lambda: self.round(element_id) > before, what, timeout)

    def round(self, element_id):
        return int(self.js("return document.getElementById(arguments[0]).dataset.round || '0'", element_id))

    def fresh(self, element_id, what, timeout=30):
        """Waits for the element's next rendering (its data-round moves on)."""
        before = self.round(element_id)
        self.wait(lambda: self.round(element_id) > before, what, timeout)

    def counts(self):
        return self.js("""return Object.fromEntries(Array.from(document.querySelectorAll('#campaign-counts tr'))
                          .map(r => [r.dataset.state, Number(r.dataset.count)]))""")

    def nothing_executed(self, what):
        state = self.js("""
            return {pwned: window.__pwned === undefined ? null : String(window.__pwned), title: document.title,
                    foreign: Array.from(document.querySelectorAll('img, iframe, object, embed, svg, b, script'))
                               .filter(e => !(e.tagName === 'SCRIPT' && e.getAttribute('src') === '/ui/page.js'))
                               .map(e => e.tagName)};""")
        check(state["pwned"] is None, f"{what}: hostile script ran ({state['pwned']})")
        check(state["title"] == TITLE, f"{what}: the document title changed to {state['title']!r}")
        check(state["foreign"] == [], f"{what}: elements made from text: {state['foreign']}")
        for entry in self.driver.get_log("browser"):
            message = entry.get("message", "")
            check("Content Security Policy" not in message and "Trusted Type" not in message and "TrustedHTML" not in message,
                  f"{what}: the browser blocked something: {message}")

    def compose_inline(self, title, body, link):
        self.go("#/")
        self.driver.find_element(By.ID, "mode-inline").click()
        for element_id, value in [("title", title), ("subtitle", ""), ("body", body), ("deeplink", link)]:
            self.js("const e = document.getElementById(arguments[0]); e.value = arguments[1];"
                    "e.dispatchEvent(new Event('input', {bubbles: true}));", element_id, value)
        Select(self.driver.find_element(By.ID, "push-type")).select_by_value("alert")

    def set_devices(self, text):
        self.js("document.getElementById('send-file').value = '';"
                "const e = document.getElementById('send-devices'); e.value = arguments[0];"
                "e.dispatchEvent(new Event('input', {bubbles: true}));", text)

    def send_state(self):
        return self.js("return document.getElementById('send-form').dataset.state || ''")

    def wait_send(self, states, what, timeout=60):
        self.wait(lambda: self.send_state() in states, what, timeout)
        return self.send_state()


def big_campaign(console, alpha, args):
    """Sent from the page as a file, past the guard, watched to completed."""
    what = f"a {args.devices}-device campaign sent from the page and watched to completed"
    tokens = [token("c0", n) for n in range(args.devices - 3)] + [args.failing, args.hostile, args.dead]
    path = os.path.join(args.work, "devices.txt")
    with open(path, "w") as f:
        f.write("# exported devices\n" + "\n".join(tokens) + "\n")
    console.use_key(args.alpha_key)
    console.compose_inline(HOSTILE, "Jackets are 30% off today.", "shop://product/42?ref=spring-sale")
    console.driver.find_element(By.ID, "send-file").send_keys(path)
    console.wait(lambda: console.text("send-count").startswith(f"{args.devices:,} devices"), "the device count")
    check(console.js("return document.getElementById('send-dry-run').checked"), f"{what}: dry run is not the default")
    console.driver.find_element(By.ID, "send-dry-run").click()
    before = alpha.campaign_ids()
    console.driver.find_element(By.ID, "send-button").click()
    console.wait_send({"confirm"}, f"{what}: the confirmation")
    equal(console.text("send-confirm-text"), f"This goes to {args.devices:,} devices; type {args.devices} to confirm.",
          f"{what}: confirmation")
    equal(alpha.campaign_ids(), before, f"{what}: something was created before the confirmation")
    console.driver.find_element(By.ID, "send-confirm-input").send_keys(str(args.devices - 1))
    console.driver.find_element(By.ID, "send-confirm-button").click()
    console.wait(lambda: "Type" in console.text("send-status"), f"{what}: a wrong number refused")
    equal(alpha.campaign_ids(), before, f"{what}: a wrong confirmation created a campaign")
    console.js("document.getElementById('send-confirm-input').value = ''")
    console.driver.find_element(By.ID, "send-confirm-input").send_keys(str(args.devices))
    started = time.time()
    console.driver.find_element(By.ID, "send-confirm-button").click()
    check(console.wait_send({"sent", "refused", "error"}, f"{what}: the answer") == "sent",
          f"{what}: {console.text('send-status')} {console.text('send-problems')}")
    campaign = console.js("return document.getElementById('send-form').dataset.campaign")
    equal(alpha.campaign_ids(), [campaign] + before, f"{what}: campaigns")
    console.driver.find_element(By.ID, "send-watch").click()
    console.wait(lambda: console.js("return document.getElementById('view-campaign').dataset.status || ''") == "completed",
                 f"{what}: completed", timeout=240)
    elapsed = time.time() - started
    detail = alpha.get(f"/v1/campaigns/{campaign}?state=failed,unregistered")
    equal(detail["status"], "completed", f"{what}: API status")
    equal(console.counts(), detail["counts"], f"{what}: counts by state")
    equal(detail["counts"]["delivered"], args.devices - 3, f"{what}: delivered")
    bar = console.js("const b = document.getElementById('campaign-progress').dataset; return [b.delivered, b.failed, b.remaining]")
    equal(bar, [str(args.devices - 3), "3", "0"], f"{what}: progress bar")
    # The failed devices with APNs' reasons.
    rows = console.js("""return Array.from(document.querySelectorAll('#failed-list tbody tr'))
                         .map(r => [r.dataset.token, r.querySelector('.reason').textContent])""")
    equal(sorted(rows), sorted([[r["token"], r["reason"]] for r in detail["results"]]), f"{what}: failed devices against the API")
    equal(sorted(rows), sorted([[args.failing, "BadDeviceToken"], [args.dead, "Unregistered"],
                                [args.hostile, "<img src=x onerror=window.__pwned=1><b>bold</b>"]]), f"{what}: failed devices")
    # Counts by APNs reason, as the API counts them (the hostile reason as text).
    reasons = alpha.get(f"/v1/campaigns/{campaign}/reasons")["reasons"]
    equal(sorted((r["state"], r["reason"], r["count"]) for r in reasons),
          sorted([("failed", "BadDeviceToken", 1), ("failed", "<img src=x onerror=window.__pwned=1><b>bold</b>", 1), ("unregistered", "Unregistered", 1)]),
          f"{what}: the API's reasons")
    shown_reasons = lambda: console.js("""return Array.from(document.querySelectorAll('#campaign-reasons tr[data-reason]'))
                                          .map(r => [r.dataset.state, r.querySelector('.reason').textContent, Number(r.dataset.count)])""")
    console.wait(lambda: len(shown_reasons()) == 3, f"{what}: counts by reason")
    equal(shown_reasons(), [[r["state"], r["reason"], r["count"]] for r in reasons], f"{what}: counts by reason")
    # What was sent: its link, route and lock screen, the title as text.
    console.wait(lambda: console.js("return document.querySelector('#campaign-phone .card') !== null"), f"{what}: the lock screen")
    equal(console.text("message-deeplink"), "https://example.com/product/42?ref=spring-sale", f"{what}: deep link")
    equal(console.text("message-route"), "product", f"{what}: route")
    status, preview = alpha.call("POST", "/v1/notifications/preview", json.dumps(
        {"alert": {"title": HOSTILE, "body": "Jackets are 30% off today."}, "devices": [token("aa", 0)]}))
    check(status == 200, f"{what}: preview {status}")
    lines = console.js("return Array.from(document.querySelectorAll('#campaign-phone .text.title .line')).map(e => e.textContent)")
    equal(lines, preview["requests"][0]["alert"]["title"]["lines"], f"{what}: lock-screen title")
    console.nothing_executed(what)
    return [what], elapsed, campaign


def double_click(console, alpha):
    what = "a double click on Send creates one campaign; a later click replays it"
    console.go("#/")
    console.compose_inline("Double", "Click", "")
    console.set_devices("\n".join(token("d0", n) for n in range(3)))
    before = alpha.campaign_ids()
    button = console.driver.find_element(By.ID, "send-button")
    ActionChains(console.driver).double_click(button).perform()
    console.js("document.getElementById('send-button').click(); document.getElementById('send-button').click();")
    check(console.wait_send({"sent", "replayed", "refused", "error"}, what) in {"sent", "replayed"},
          f"{what}: {console.text('send-status')} {console.text('send-problems')}")
    time.sleep(1)
    first = console.js("return document.getElementById('send-form').dataset.campaign")
    after = alpha.campaign_ids()
    equal(after, [first] + before, f"{what}: campaigns after the clicks")
    console.js("document.getElementById('send-form').dataset.state = 'again'")
    button.click()
    equal(console.wait_send({"sent", "replayed", "refused", "error"}, what), "replayed", f"{what}: the third click")
    equal(console.js("return document.getElementById('send-form').dataset.campaign"), first, f"{what}: the same campaign")
    equal(alpha.campaign_ids(), after, f"{what}: campaigns after the third click")
    check("Already sent" in console.text("send-status"), f"{what}: {console.text('send-status')!r}")
    return [what]


def scheduled(console, alpha):
    what = "send_at and lane from the page: a scheduled bulk campaign, its schedule shown"
    console.go("#/")
    console.compose_inline("Later", "Tomorrow's sale", "")
    console.set_devices("\n".join(token("b0", n) for n in range(2)))
    # An hour from now, in the browser's local time, as the datetime-local field takes it.
    console.js("""const at = new Date(Date.now() + 3600e3); at.setMilliseconds(0);
                  const local = new Date(at.getTime() - at.getTimezoneOffset() * 60e3).toISOString().slice(0, 19);
                  const e = document.getElementById('send-at'); e.value = local; e.dispatchEvent(new Event('input', {bubbles: true}));
                  window.__expectedSendAt = at.toISOString();""")
    Select(console.driver.find_element(By.ID, "send-lane")).select_by_value("bulk")
    console.js("document.getElementById('send-dry-run').checked = true")
    console.driver.find_element(By.ID, "send-button").click()
    check(console.wait_send({"sent", "replayed", "refused", "error"}, what) == "sent", f"{what}: {console.text('send-status')} {console.text('send-problems')}")
    campaign = console.js("return document.getElementById('send-form').dataset.campaign")
    detail = alpha.get(f"/v1/campaigns/{campaign}")
    expected = console.js("return window.__expectedSendAt")
    equal((detail["status"], detail["lane"], detail["dry_run"], detail["send_at"]), ("scheduled", "bulk", True, expected), f"{what}: the campaign")
    console.show(f"#/campaigns/{campaign}", "view-campaign", what)
    equal(console.text("fact-send-at"), expected, f"{what}: send at shown")
    equal(console.js("return document.getElementById('view-campaign').dataset.status"), "scheduled", f"{what}: state shown")
    console.js("document.getElementById('send-lane').value = ''; document.getElementById('send-at').value = '';")
    return [what]


def lifecycle(console, alpha):
    what = "pause, resume and cancel from the page; the numbers are the API's"
    devices = "\n".join(token("e0", n) for n in range(900))
    status, created = alpha.call("POST", "/v1/campaigns", json.dumps({"alert": {"body": "Slow"}, "rate_per_second": 30}).encode() + b"\n"
                                 + devices.encode(), content_type="application/x-ndjson")
    check(status == 202, f"{what}: {status} {created}")
    campaign = created["id"]
    console.go(f"#/campaigns/{campaign}")
    console.wait(lambda: (console.counts().get("delivered") or 0) > 0, f"{what}: sending")
    console.driver.find_element(By.ID, "campaign-pause").click()
    console.wait(lambda: console.js("return document.getElementById('view-campaign').dataset.status") == "paused", f"{what}: paused")

    def settled(expected_status):
        # Paused: what was in flight finishes; then the page and the API agree.
        def agree():
            detail = alpha.get(f"/v1/campaigns/{campaign}?per_page=1")
            shown = console.counts()
            return (detail["status"] == expected_status and detail["counts"]["in-flight"] == 0
                    and shown == detail["counts"]), detail
        console.wait(lambda: agree()[0], f"{what}: page and API agree ({expected_status})", timeout=30)
        return agree()[1]

    paused = settled("paused")
    time.sleep(1.5)
    equal(console.counts(), alpha.get(f"/v1/campaigns/{campaign}")["counts"], f"{what}: nothing moves while paused")
    equal(console.counts(), paused["counts"], f"{what}: paused counts")
    console.driver.find_element(By.ID, "campaign-resume").click()
    console.wait(lambda: (console.counts().get("delivered") or 0) > paused["counts"]["delivered"], f"{what}: resumed")
    console.driver.find_element(By.ID, "campaign-pause").click()
    paused = settled("paused")
    console.driver.find_element(By.ID, "campaign-cancel").click()
    unsent = paused["counts"]["pending"] + paused["counts"]["retrying"]
    check(unsent > 0, f"{what}: nothing left to cancel")
    text = console.text("cancel-confirm-text")
    check(f"{unsent:,} devices not sent yet will not be sent" in text, f"{what}: cancel confirmation {text!r}, expected {unsent}")
    console.driver.find_element(By.ID, "cancel-confirm-yes").click()
    console.wait(lambda: console.js("return document.getElementById('view-campaign').dataset.status") == "cancelled", f"{what}: cancelled")
    final = alpha.get(f"/v1/campaigns/{campaign}")
    equal(final["not_sent"], unsent, f"{what}: not_sent")
    console.wait(lambda: console.counts() == alpha.get(f"/v1/campaigns/{campaign}")["counts"], f"{what}: final counts")
    equal(console.text("fact-not-sent"), f"{final['not_sent']:,}", f"{what}: not sent shown")
    check(console.js("return document.getElementById('campaign-pause').disabled && document.getElementById('campaign-cancel').disabled"),
          f"{what}: buttons of a finished campaign")
    return [what], campaign


def campaigns_list(console, admin, alpha, beta, args, mine):
    names = []
    what = "the campaigns list is the API's, newest first, with its filters"
    console.show("#/campaigns", "campaign-list", what)
    shown = console.js("return Array.from(document.querySelectorAll('#campaign-list .campaign-row')).map(r => [r.dataset.id, r.dataset.status])")
    listed = alpha.get("/v1/campaigns?limit=20")["campaigns"]
    equal([row[0] for row in shown], [c["id"] for c in listed], f"{what}: ids")
    before = console.round("campaign-list")
    Select(console.driver.find_element(By.ID, "filter-status")).select_by_value("cancelled")
    console.wait(lambda: console.round("campaign-list") > before, what)
    shown = console.js("return Array.from(document.querySelectorAll('#campaign-list .campaign-row')).map(r => r.dataset.id)")
    equal(shown, [c["id"] for c in alpha.get("/v1/campaigns?limit=20&status=cancelled")["campaigns"]], f"{what}: cancelled")
    check(len(shown) == 1, f"{what}: {shown}")
    Select(console.driver.find_element(By.ID, "filter-status")).select_by_value("")
    Select(console.driver.find_element(By.ID, "filter-status")).select_by_value("")
    names.append(what)

    what = "a client key sees only its campaigns; an admin sees all"
    console.use_key(args.beta_key)
    console.show("#/campaigns", "campaign-list", what)
    shown = console.js("return Array.from(document.querySelectorAll('#campaign-list .campaign-row')).map(r => r.dataset.id)")
    equal(shown, [], f"{what}: beta's list")
    equal(beta.campaign_ids(), [], f"{what}: beta's API list")
    console.go(f"#/campaigns/{mine}")
    console.wait(lambda: console.text("campaign-status") == "No such campaign for this key.", f"{what}: another key's campaign")
    console.use_key(args.admin_key)
    console.show("#/campaigns", "campaign-list", what)
    shown = console.js("return Array.from(document.querySelectorAll('#campaign-list .campaign-row')).map(r => r.dataset.id)")
    equal(shown, [c["id"] for c in admin.get("/v1/campaigns?limit=20")["campaigns"]], f"{what}: admin's list")
    equal(set(shown), set(alpha.campaign_ids()), f"{what}: the admin sees alpha's")
    storage = console.js("return {session: sessionStorage.getItem('pushgate.apiKey'), local: localStorage.length, cookie: document.cookie}")
    equal(storage, {"session": args.admin_key, "local": 0, "cookie": ""}, f"{what}: the key is kept for the tab only")
    names.append(what)

    what = "the list pages through Older and Newer as the API's next link does"
    for n in range(18):
        status, _ = admin.call("POST", "/v1/campaigns", json.dumps({"alert": {"body": f"Page {n}"}, "dry_run": True, "devices": [token("a0", n)]}))
        check(status == 202, f"{what}: creating campaign {n}: {status}")
    first = admin.get("/v1/campaigns?limit=20")
    second = admin.get(first["next"])
    check(len(first["campaigns"]) == 20 and len(second["campaigns"]) >= 1, f"{what}: {len(first['campaigns'])}, {len(second['campaigns'])}")
    rows = lambda: console.js("return Array.from(document.querySelectorAll('#campaign-list .campaign-row')).map(r => r.dataset.id)")
    console.show("#/campaigns", "campaign-list", what)
    console.wait(lambda: rows() == [c["id"] for c in first["campaigns"]], f"{what}: the first page")
    before = console.round("campaign-list")
    console.driver.find_element(By.ID, "campaigns-older").click()
    console.wait(lambda: console.round("campaign-list") > before and rows() == [c["id"] for c in second["campaigns"]], f"{what}: the older page")
    before = console.round("campaign-list")
    console.driver.find_element(By.ID, "campaigns-newer").click()
    console.wait(lambda: console.round("campaign-list") > before and rows() == [c["id"] for c in first["campaigns"]], f"{what}: back to the first page")
    check(console.js("return document.getElementById('campaigns-newer').disabled"), f"{what}: Newer on the first page")
    names.append(what)
    return names


def dead_tokens(console, admin, args):
    what = "dead tokens: app, reason and Apple's time"
    console.show("#/dead", "dead-list", what)
    rows = console.js("""return Array.from(document.querySelectorAll('#dead-list tbody tr'))
                         .map(r => Array.from(r.children).map(c => c.textContent))""")
    answer = admin.get("/v1/tokens/dead")
    equal([r[0] for r in rows], [t["token"] for t in answer["tokens"]], f"{what}: tokens")
    dead = next(r for r in rows if r[0] == args.dead)
    equal(dead[1:4], ["default", "Unregistered", "2026-11-30T00:53:20.000Z"], f"{what}: the dead token's row")
    return [what]


def screenshots(console, admin, artifacts):
    """A campaign in flight (200 a second), drawn wide and at a phone's width."""
    devices = "\n".join(["ab" * 32, "ac" * 32, "ad" * 32] + [token("f0", n) for n in range(2997)])
    status, created = admin.call("POST", "/v1/campaigns", json.dumps(
        {"alert": {"title": "Spring sale", "body": "Jackets, boots and tents are 30% off until Sunday."},
         "deeplink": "shop://product/42?ref=spring-sale", "thread_id": "spring", "rate_per_second": 200,
         "confirm_devices": 3000}).encode() + b"\n" + devices.encode(), content_type="application/x-ndjson")
    check(status == 202, f"screenshots: {status} {created}")
    campaign = created["id"]
    shots = []
    for width, label in [(1400, "wide"), (390, "narrow")]:
        console.driver.set_window_size(width, 1800)
        console.show("#/campaigns", "campaign-list", "screenshot list")
        console.fresh("campaign-list", "a second reading of the list, for the rate")
        path = os.path.join(artifacts, f"console-campaigns-{label}.png")
        console.driver.find_element(By.TAG_NAME, "body").screenshot(path)
        console.show(f"#/campaigns/{campaign}", "view-campaign", "screenshot campaign")
        console.wait(lambda: console.js("return document.querySelector('#campaign-phone .card') !== null"), "the lock screen")
        time.sleep(2)  # two more readings for the rate (while it sends)
        path2 = os.path.join(artifacts, f"console-campaign-{label}.png")
        console.driver.find_element(By.TAG_NAME, "body").screenshot(path2)
        overflow = console.js("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        wide = console.js("""const w = document.documentElement.clientWidth;
            return Array.from(document.querySelectorAll('body *')).filter(e => e.getBoundingClientRect().right > w + 0.5)
                .slice(0, 5).map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))""")
        check(overflow <= 0, f"{label}: the campaign page is wider than the window by {overflow} px: {wide}")
        shots += [path, path2]
        if label == "narrow":
            # The other views at a phone's width: nothing wider than the window either.
            for hash_, element_id in [("#/campaigns", "campaign-list"), ("#/dead", "dead-list")]:
                console.show(hash_, element_id, f"{hash_} at 390 px")
                overflow = console.js("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
                check(overflow <= 0, f"{hash_} is wider than the window by {overflow} px at 390")
            console.go("#/")
            console.wait(lambda: not console.js("return document.getElementById('view-preview').hidden"), "the preview view")
            overflow = console.js("return document.documentElement.scrollWidth - document.documentElement.clientWidth")
            check(overflow <= 0, f"the preview and send form are wider than the window by {overflow} px at 390")
    console.driver.set_window_size(1500, 2600)
    for path in shots:
        check(os.path.getsize(path) > 5000, f"empty screenshot {path}")
    return ["screenshots wide and narrow, no sideways scrolling at 390 px"]


def main():
    parser = argparse.ArgumentParser()
    for name in ["--base", "--admin-key", "--alpha-key", "--beta-key", "--failing", "--dead", "--hostile", "--work", "--artifacts"]:
        parser.add_argument(name, required=True)
    parser.add_argument("--devices", type=int, default=5000)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    args = parser.parse_args()
    os.makedirs(args.artifacts, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))

    driver = headless_chromium(args.chromium, args.chromedriver)
    console = Console(driver, args.base)
    admin, alpha, beta = API(args.base, args.admin_key), API(args.base, args.alpha_key), API(args.base, args.beta_key)

    passed, failed = [], []
    found = {}

    def run(label, body):
        started = time.time()
        try:
            names = body()
            for name in names:
                print(json.dumps({"case": name, "ok": True, "seconds": round(time.time() - started, 1)}), flush=True)
            passed.extend(names)
        except Exception as error:
            detail = str(error) if isinstance(error, Failure) else traceback.format_exc()
            try:  # what the page said, and any script error, to tell why
                detail += " | page: " + json.dumps(console.js("""return {hash: location.hash, ready: document.body.dataset.ready,
                    status: ['campaign-status', 'campaign-action-message', 'campaigns-status', 'dead-status', 'send-status']
                        .map(id => id + '=' + document.getElementById(id).textContent)}"""))
                detail += " | log: " + json.dumps([e.get("message", "") for e in driver.get_log("browser") if e.get("level") == "SEVERE"][:5])
            except Exception:
                pass
            print(json.dumps({"case": label, "ok": False, "error": detail}), flush=True)
            failed.append(label)

    def big():
        names, elapsed, campaign = big_campaign(console, alpha, args)
        found["big"] = campaign
        print(json.dumps({"measure": "big campaign from confirm to completed on the page", "devices": args.devices,
                          "seconds": round(elapsed, 1)}), flush=True)
        return names

    def pause():
        names, campaign = lifecycle(console, alpha)
        found["paused"] = campaign
        return names

    try:
        run("big campaign", big)
        run("double click", lambda: double_click(console, alpha))
        run("scheduled", lambda: scheduled(console, alpha))
        run("lifecycle", pause)
        run("list and keys", lambda: campaigns_list(console, admin, alpha, beta, args, found.get("big", "0" * 36)))
        run("dead tokens", lambda: dead_tokens(console, admin, args))
        run("screenshots", lambda: screenshots(console, admin, args.artifacts))
        run("nothing ran", lambda: (console.nothing_executed("the whole session"), ["nothing hostile ran in the whole session"])[1])
    finally:
        driver.quit()

    print(f"{len(passed)} passed, {len(failed)} failed", flush=True)
    return 0 if not failed and passed else 1


if __name__ == "__main__":
    sys.exit(main())
