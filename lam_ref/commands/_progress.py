"""The overall progress bar of a run on stderr (files done, windows, trajectories, time; docs/cli.md)."""

from __future__ import annotations

import os
import sys

from ..tables import plural, printable


def _clock(secs: float) -> str:
    secs = int(secs)
    h, rest = divmod(secs, 3600)
    return f"{h}:{rest // 60:02d}:{rest % 60:02d}" if h else f"{rest // 60:02d}:{rest % 60:02d}"


class RunProgress:
    """One progress bar for a whole run on stderr: files done of the total, windows encoded so far,
    elapsed time and time left. Library bars (sentence-transformers' per-batch bars) are never shown.

    On a terminal (a pseudo-terminal included) it redraws in place a few times a second; when
    stderr is not a terminal it writes a whole plain line (ending in a newline, never a ``\\r``
    fragment, so an error line after it starts a line of its own: D14) at the start, at most every
    30 s, and at the end, with the time left (``[elapsed<left]``, from the share of the work done;
    ``?`` before any) and no final line that repeats the one before it. ``enabled=False``
    (``--no-progress``) shows nothing. Messages printed through :meth:`write` appear above the bar,
    made :func:`printable`. ``unit`` names what is counted (``file``; ``trajectory`` for
    ``compare``, ``step`` for ``determinism probe``, ``budget`` for ``cct thm3``); trajectories are
    counted beside files only when the unit is ``file``. A file that holds several trajectories
    (LoCoMo) says how many of them are done (:meth:`expect`), and the time left counts them.
    ``windows`` never falls behind ``encoded``: the windows of the trajectory being encoded count as
    they pass through the encoder (issue 35 §5)."""

    PLAIN_INTERVAL_S = 30.0

    def __init__(self, total_files: int, *, enabled: bool = True, desc: str = "lam-ref", unit: str = "file") -> None:
        import time

        self.windows = 0
        self.trajectories = 0
        self.encoded = 0
        self._inflight = 0  # windows encoded in the trajectory not finished yet
        self._bar = None
        self._plain = False
        self._total = total_files
        self._done = 0
        self._sub_total = 0  # trajectories of the file being read (LoCoMo holds several)
        self._sub_done = 0
        self._desc = desc
        self._unit = unit
        self._shown: str | None = None
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
            units = plural(2, unit).split(" ", 1)[1]
            self._bar = tqdm(total=total_files, unit=unit, desc=desc, file=sys.stderr, dynamic_ncols=dynamic,
                             ncols=None if dynamic else 100, nrows=rows, mininterval=0.2, leave=True,
                             bar_format="{desc}: {n_fmt}/{total_fmt} " + units + " |{bar}| [{elapsed}<{remaining}]{postfix}")
            self._bar.set_postfix_str(self._counts(), refresh=False)

    def _fraction(self) -> float:
        sub = self._sub_done / self._sub_total if self._sub_total else 0.0
        return min(1.0, (self._done + min(sub, 1.0)) / self._total) if self._total else 1.0

    def _line(self, final: bool = False) -> None:
        import time

        now = time.monotonic()
        within = (f" ({self._sub_done}/{plural(self._sub_total, 'trajectory')} of this file)"
                  if self._sub_total > 1 and self._sub_done < self._sub_total else "")
        text = (f"{self._desc}: {self._done}/{self._total} {plural(2, self._unit).split(' ', 1)[1]}"
                f"{within} | {self._counts()}")
        if final and text == self._shown:
            return  # the last line already said it
        self._last, self._shown = now, text
        elapsed = now - self._start
        f = self._fraction()
        left = "00:00" if f >= 1.0 else ("?" if f <= 0.0 else _clock(elapsed * (1.0 - f) / f))
        print(f"{text} [{_clock(elapsed)}<{left}]", file=sys.stderr, flush=True)

    def _counts(self) -> str:
        parts = [plural(self.windows + self._inflight, "window")]
        if self._unit == "file":
            parts.append(plural(self.trajectories, "trajectory"))
        if self.encoded:
            parts.append(f"{self.encoded} encoded")
        return ", ".join(parts)

    def expect(self, trajectories: int) -> None:
        """The file being read holds ``trajectories`` trajectories (shown while it is read)."""
        self._sub_total, self._sub_done = trajectories, 0

    def advance(self, files: int = 1, windows: int = 0, trajectories: int = 0) -> None:
        """``files`` more files done, having had ``windows`` windows and ``trajectories`` trajectories."""
        import time

        self.windows += windows
        self.trajectories += trajectories
        self._inflight = 0
        self._done += files
        self._sub_total = self._sub_done = 0
        if self._bar is not None:
            self._bar.set_postfix_str(self._counts(), refresh=False)
            self._bar.update(files)
        elif self._plain and time.monotonic() - self._last >= self.PLAIN_INTERVAL_S:
            self._line()

    def note(self, windows: int = 0, trajectories: int = 0) -> None:
        """Windows and trajectories done inside a file that is not finished yet (LoCoMo holds several)."""
        import time

        self.windows += windows
        self.trajectories += trajectories
        self._sub_done += trajectories
        self._inflight = 0
        if self._bar is not None:
            within = (f", {self._sub_done}/{self._sub_total} in this file"
                      if 1 < self._sub_total and self._sub_done < self._sub_total else "")
            self._bar.set_postfix_str(self._counts() + within, refresh=False)
        elif self._plain and trajectories and time.monotonic() - self._last >= self.PLAIN_INTERVAL_S:
            self._line()

    def encoding(self, windows: int) -> None:
        """``windows`` more windows through the encoder (called per batch, :meth:`Encoder.encode`'s
        ``on_batch``): the bar moves during a long encoding inside one file (issue 23 §6), redrawn at
        most 5 times a second on a terminal and every 30 s as a whole line otherwise."""
        import time

        self.encoded += windows
        self._inflight += windows
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
            self._line(final=True)
