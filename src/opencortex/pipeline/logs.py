"""The system log: a bounded in-memory ring (what the context shows the model, so it can
explain why something was blocked) plus a rotating file under the XDG state dir."""

from __future__ import annotations

import collections
import logging
import logging.handlers
import threading
import time
from pathlib import Path

__all__ = ["LogRing", "get_logger"]

LOGGER = "opencortex"


class LogRing(logging.Handler):
    """Keeps the last ``size`` records as short lines."""

    def __init__(self, size: int = 500) -> None:
        super().__init__(level=logging.INFO)
        self.lines: collections.deque[str] = collections.deque(maxlen=size)
        self._lock2 = threading.Lock()

    def emit(self, record: logging.LogRecord) -> None:
        line = (f"{time.strftime('%H:%M:%S', time.localtime(record.created))} "
                f"{record.levelname.lower()} {record.getMessage()}")
        with self._lock2:
            self.lines.append(line)

    def tail(self, n: int = 20) -> list[str]:
        with self._lock2:
            return list(self.lines)[-n:]


_ring: LogRing | None = None
_setup_lock = threading.Lock()


def get_logger(state_dir: Path | None = None) -> tuple[logging.Logger, LogRing]:
    """The OpenCortex logger with its ring buffer (and, given a state dir, a rotating
    ``opencortex.log`` there: 1 MB × 3)."""
    global _ring
    log = logging.getLogger(LOGGER)
    with _setup_lock:
        if _ring is None:
            _ring = LogRing()
            log.addHandler(_ring)
            log.setLevel(logging.INFO)
            log.propagate = False
        if state_dir is not None and not any(
                isinstance(h, logging.handlers.RotatingFileHandler) for h in log.handlers):
            try:
                state_dir.mkdir(parents=True, exist_ok=True)
                fh = logging.handlers.RotatingFileHandler(
                    state_dir / "opencortex.log", maxBytes=1_000_000, backupCount=3,
                    encoding="utf-8")
                fh.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
                log.addHandler(fh)
            except OSError:
                pass
    return log, _ring
