"""Drive a headless Chromium over the DevTools protocol, for report tests and screenshots.

:class:`Chromium` starts ``chromium --headless --remote-debugging-pipe``, which reads protocol
commands (JSON, NUL-terminated) on its file descriptor 3 and answers on 4, so no port is opened.
One page is attached (flat session mode) and offered as a few calls: :meth:`Chromium.open`
a URL, :meth:`Chromium.evaluate` an expression, :meth:`Chromium.click` an element and
:meth:`Chromium.screenshot` the page or a part of it. Protocol reference:
https://chromedevtools.github.io/devtools-protocol/ (Target, Page, Runtime, Emulation).

Expressions sent with :meth:`Chromium.evaluate` run as DevTools evaluations, which the page's
Content-Security-Policy does not restrict; the page's own scripts stay subject to it.

Chromium is Debian's ``chromium`` package (or ``$CHROMIUM``); :func:`find_chromium` locates it.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["BrowserError", "Chromium", "find_chromium"]

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--font-render-hinting=none",
    "--remote-debugging-pipe",
)


class BrowserError(RuntimeError):
    """Chromium could not be started, exited, or answered a command with an error."""


def find_chromium() -> str | None:
    """Path of the Chromium binary: ``$CHROMIUM``, then ``chromium`` on ``PATH``; else None."""
    found = os.environ.get("CHROMIUM") or shutil.which("chromium")
    return found or shutil.which("chromium-browser")


class Chromium:
    """A headless Chromium with one page (a context manager; closing ends the process).

    Args:
        binary: The Chromium executable (default: :func:`find_chromium`).
        width / height: The page's viewport in CSS pixels.
        timeout: Seconds to wait for any one answer.

    Raises:
        BrowserError: No Chromium found, or it did not start.

    """

    def __init__(
        self,
        binary: str | None = None,
        *,
        width: int = 1280,
        height: int = 900,
        timeout: float = 60,
    ) -> None:
        found = binary or find_chromium()
        if found is None:
            raise BrowserError("chromium not found (apt-get install chromium, or set $CHROMIUM)")
        self._timeout = timeout
        self._profile = tempfile.TemporaryDirectory(prefix="agent-eval-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def wire_pipes() -> None:  # runs in the child: the protocol wants fds 3 and 4
            high_r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)  # out of the way of 3 and 4
            high_w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self._proc = subprocess.Popen(  # a fixed argument list, no shell
            [found, *FLAGS, f"--user-data-dir={self._profile.name}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=None if os.environ.get("AGENT_EVAL_CHROMIUM_LOG") else subprocess.DEVNULL,
            pass_fds=(3, 4),  # kept open past close_fds, which runs after wire_pipes
            preexec_fn=wire_pipes,  # noqa: PLW1509  no threads are started before exec
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self._session = self._call("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime"):
            self.send(f"{domain}.enable")
        self.resize(width, height)

    # -- protocol ------------------------------------------------------------------------------

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self._from_browser], [], [], max(0.0, left))
            if not ready:
                raise BrowserError("chromium did not answer in time")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise BrowserError(f"chromium exited (code {self._proc.poll()})")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        decoded: dict[str, Any] = json.loads(message)
        return decoded

    def _call(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        self._next_id += 1
        ident = self._next_id
        command: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            command["sessionId"] = session
        os.write(self._to_browser, json.dumps(command).encode("utf-8") + b"\0")
        deadline = time.monotonic() + self._timeout
        while True:
            message = self._read_message(deadline)
            if message.get("id") != ident:
                self.events.append(message)
                continue
            if "error" in message:
                raise BrowserError(f"{method}: {message['error'].get('message', message['error'])}")
            result: dict[str, Any] = message.get("result", {})
            return result

    def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one protocol command to the page; returns its ``result``.

        Raises:
            BrowserError: The command failed or timed out.

        """
        return self._call(method, params, self._session)

    # -- page ----------------------------------------------------------------------------------

    def resize(self, width: int, height: int) -> None:
        """Set the viewport to ``width`` x ``height`` CSS pixels."""
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
        )

    def open(self, url: str, settle: float = 0.3) -> None:
        """Navigate to ``url`` and wait for its load event (then ``settle`` seconds more).

        Raises:
            BrowserError: The page cannot be opened, or did not load in time.

        """
        self.events.clear()
        navigation = self.send("Page.navigate", {"url": url})
        if "errorText" in navigation:
            raise BrowserError(f"cannot open {url}: {navigation['errorText']}")
        deadline = time.monotonic() + self._timeout
        # a same-document navigation (only the fragment changes) has no loaderId and no load
        while "loaderId" in navigation and not any(
            e.get("method") == "Page.loadEventFired" for e in self.events
        ):
            self.events.append(self._read_message(deadline))
        time.sleep(settle)

    def evaluate(self, expression: str) -> Any:
        """The JSON value of ``expression`` evaluated in the page (promises awaited).

        Raises:
            BrowserError: The expression threw.

        """
        answer = self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in answer:
            details = answer["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise BrowserError(f"evaluating {expression!r}: {text}")
        return answer.get("result", {}).get("value")

    def click(self, selector: str) -> None:
        """Click the first element matching the CSS ``selector`` (a DOM click event).

        Raises:
            BrowserError: No element matches.

        """
        found = self.evaluate(
            f"(() => {{ const el = document.querySelector({json.dumps(selector)}); "
            "if (!el) return false; el.click(); return true; })()"
        )
        if not found:
            raise BrowserError(f"no element matches {selector!r}")

    def console_errors(self) -> list[str]:
        """Uncaught exceptions the page reported since the last :meth:`open`."""
        return [
            str(e["params"]["exceptionDetails"].get("exception", {}).get("description", ""))
            for e in self.events
            if e.get("method") == "Runtime.exceptionThrown"
        ]

    def screenshot(
        self, path: str | Path, *, selector: str | None = None, full_page: bool = False
    ) -> Path:
        """Write a PNG of the viewport, the whole page, or the element matching ``selector``.

        Raises:
            BrowserError: No element matches ``selector``.

        """
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": True}
        if selector is not None or full_page:
            box = self.evaluate(
                "(() => { scrollTo(0, 0); const el = "
                + (
                    f"document.querySelector({json.dumps(selector)})"
                    if selector
                    else "document.documentElement"
                )
                + "; if (!el) return null; const r = el.getBoundingClientRect(); return "
                "{x: r.left + scrollX, y: r.top + scrollY, width: r.width, "
                "height: el === document.documentElement ? el.scrollHeight : r.height}; })()"
            )
            if box is None:
                raise BrowserError(f"no element matches {selector!r}")
            params["clip"] = {**box, "scale": 1}
        data = self.send("Page.captureScreenshot", params)["data"]
        target = Path(path)
        target.write_bytes(base64.b64decode(data))
        return target

    # -- lifetime ------------------------------------------------------------------------------

    def close(self) -> None:
        """End the browser process and remove its profile."""
        if self._proc.poll() is None:
            with contextlib.suppress(BrowserError, OSError):
                self._call("Browser.close")
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._profile.cleanup()

    def __enter__(self) -> Chromium:
        """The started browser."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Close the browser."""
        self.close()
