"""Open a page in real headless Chromium and report what a reader would see.

Speaks the DevTools protocol over `--remote-debugging-pipe` (fd 3 in, fd 4 out, NUL-separated JSON),
with the standard library only: navigate, wait for the load event (images included), read every
image's natural size, collect console errors, uncaught exceptions and failed loads, and take a
full-page screenshot.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import select
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
INSTALL = REPO / "scripts" / "install_chromium.sh"

PAGE_STATE = """JSON.stringify({
  title: document.title,
  headings: Array.from(document.querySelectorAll('h2')).map(h => h.textContent),
  images: Array.from(document.images).map(i => ({src: i.getAttribute('src'), complete: i.complete,
                                                 width: i.naturalWidth, height: i.naturalHeight})),
  nodata: Array.from(document.querySelectorAll('.nodata')).map(p => p.closest('section').id),
  tables: document.querySelectorAll('table').length,
  text: document.body.innerText,
})"""


def chromium_binary() -> str:
    """Debian's chromium, installed by the repository's script when missing (the test needs it)."""
    done = subprocess.run(["bash", str(INSTALL)], capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, f"scripts/install_chromium.sh failed:\n{done.stderr[-3000:]}"
    return done.stdout.strip().splitlines()[-1]


@dataclass
class PageView:
    state: dict[str, Any]
    errors: list[str] = field(default_factory=list)
    screenshot: bytes = b""


class _Pipe:
    def __init__(self, binary: str, profile: Path) -> None:
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # Move the child's ends above any fd number it must end up on, so the dup2s cannot clobber them.
        high_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
        high_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
        os.close(to_child_r)
        os.close(from_child_w)

        def onto_3_and_4() -> None:
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self.proc = subprocess.Popen(
            [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
             "--remote-debugging-pipe", f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(3, 4), preexec_fn=onto_3_and_4, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        os.close(high_r)
        os.close(high_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None, timeout: float = 60) -> dict[str, Any]:
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get("id") == self._next_id:
                assert "error" not in reply, f"{method}: {reply['error']}"
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        seen = len(self.events)
        for event in self.events[:seen]:
            if event.get("method") == method:
                return event
        while True:
            event = self._read(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event

    def _read(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            assert left > 0, "chromium did not answer in time"
            ready, _, _ = select.select([self._from_child], [], [], left)
            if ready:
                chunk = os.read(self._from_child, 1 << 20)
                assert chunk, f"chromium closed its DevTools pipe (exit code {self.proc.poll()})"
                self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except (AssertionError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self._to_child)
        os.close(self._from_child)


def _errors(events: list[dict[str, Any]]) -> list[str]:
    """Console errors, uncaught exceptions and failed loads, as one line each."""
    found = []
    for event in events:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            found.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            found.append("exception: " + json.dumps(params.get("exceptionDetails", {}))[:500])
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            found.append(f"log ({entry.get('source')}): {entry.get('text')} {entry.get('url', '')}")
    return found


def view_page(binary: str, page: Path, profile: Path, width: int = 1400) -> PageView:
    """Load `page` (a file) and return its state, the errors it raised and a full-page screenshot."""
    pipe = _Pipe(binary, profile)
    try:
        target = pipe.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = pipe.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
            pipe.send(domain, session=session)
        pipe.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=session)
        pipe.send("Page.navigate", {"url": page.resolve().as_uri()}, session=session)
        pipe.wait_event("Page.loadEventFired")
        result = pipe.send("Runtime.evaluate", {"expression": PAGE_STATE, "returnByValue": True}, session=session)
        state = json.loads(result["result"]["value"])
        size = pipe.send("Page.getLayoutMetrics", session=session)["cssContentSize"]
        shot = pipe.send(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True, "clip": {"x": 0, "y": 0, "width": width, "height": size["height"], "scale": 1}},
            session=session,
        )
        time.sleep(0.2)  # let late console events arrive before reading them
        pipe.send("Runtime.evaluate", {"expression": "1"}, session=session)
        return PageView(state, _errors(pipe.events), base64.b64decode(shot["data"]))
    finally:
        pipe.close()
