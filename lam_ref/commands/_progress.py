"""The overall progress bar of a run on stderr (files done, windows, trajectories, time; docs/cli.md)."""

from __future__ import annotations

import os
import sys

from ..tables import printable


class RunProgress:
    """One progress bar for a whole run on stderr: files done of the total, windows encoded so far,
    elapsed time and ETA. Library bars (sentence-transformers' per-batch bars) are never shown.

    On a terminal (a pseudo-terminal included) it redraws in place a few times a second; when
    stderr is not a terminal it writes a whole plain line (ending in a newline, never a ``\\r``
    fragment, so an error line after it starts a line of its own: D14) at the start, at most every
    30 s, and at the end. ``enabled=False`` (``--no-progress``) shows nothing. Messages printed
    through :meth:`write` appear above the bar, made :func:`printable`. ``unit`` names what is
    counted (``file``; ``step`` for ``determinism probe``)."""

    PLAIN_INTERVAL_S = 30.0

    def __init__(self, total_files: int, *, enabled: bool = True, desc: str = "lam-ref", unit: str = "file") -> None:
        import time

        self.windows = 0
        self.trajectories = 0
        self.encoded = 0
        self._bar = None
        self._plain = False
        self._total = total_files
        self._done = 0
        self._desc = desc
        self._unit = unit
        self._start = self._last = time.monotonic()
        if enabled and total_files > 0:
            tty = bool(getattr(sys.stderr, "isatty", lambda: False)())
            if not tty:
                self._plain = True
                self._line()
                return
            from tqdm import tqdm

            try:  # a pseudo-terminal without a window size reports 0 x 0: tqdm would then draw nothing
                size = os.get_terminal_size(sys.stderr.fileno())
            except (OSError, ValueError, AttributeError):
                size = None
            dynamic = size is not None and size.columns >= 20
            rows = size.lines if size is not None and size.lines > 0 else 24
            self._bar = tqdm(total=total_files, unit=unit, desc=desc, file=sys.stderr, dynamic_ncols=dynamic,
                             ncols=None if dynamic else 100, nrows=rows, mininterval=0.2, leave=True,
                             bar_format="{desc}: {n_fmt}/{total_fmt} " + unit + "s |{bar}| [{elapsed}<{remaining}]{postfix}")
            self._bar.set_postfix_str("0 windows", refresh=False)

    def _line(self) -> None:
        import time

        self._last = time.monotonic()
        secs = int(self._last - self._start)
        print(f"{self._desc}: {self._done}/{self._total} {self._unit}s | {self._counts()} "
              f"[{secs // 60:02d}:{secs % 60:02d}]", file=sys.stderr, flush=True)

    def _counts(self) -> str:
        enc = f", {self.encoded} encoded" if self.encoded else ""
        return f"{self.windows} windows, {self.trajectories} trajectories{enc}"

    def advance(self, files: int = 1, windows: int = 0, trajectories: int = 0) -> None:
        """``files`` more files done, having had ``windows`` windows and ``trajectories`` trajectories."""
        import time

        self.windows += windows
        self.trajectories += trajectories
        self._done += files
        if self._bar is not None:
            self._bar.set_postfix_str(self._counts(), refresh=False)
            self._bar.update(files)
        elif self._plain and time.monotonic() - self._last >= self.PLAIN_INTERVAL_S:
            self._line()

    def note(self, windows: int = 0, trajectories: int = 0) -> None:
        """Windows and trajectories done inside a file that is not finished yet (LoCoMo holds several)."""
        self.windows += windows
        self.trajectories += trajectories
        if self._bar is not None:
            self._bar.set_postfix_str(self._counts(), refresh=False)

    def encoding(self, windows: int) -> None:
        """``windows`` more windows through the encoder (called per batch, :meth:`Encoder.encode`'s
        ``on_batch``): the bar moves during a long encoding inside one file (issue 23 §6), redrawn at
        most 5 times a second on a terminal and every 30 s as a whole line otherwise."""
        import time

        self.encoded += windows
        now = time.monotonic()
        if self._bar is not None:
            self._bar.set_postfix_str(self._counts(), refresh=False)
            if now - self._last >= 0.2:
                self._last = now
                self._bar.refresh()
        elif self._plain and now - self._last >= self.PLAIN_INTERVAL_S:
            self._line()

    def write(self, line: str) -> None:
        """Print one line on stderr without breaking the bar (made :func:`printable`)."""
        line = printable(line)
        if self._bar is not None:
            self._bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        if self._plain:
            self._plain = False
            self._line()
