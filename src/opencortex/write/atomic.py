"""Moved to ``opencortex.atomic`` (the base layer, so the guard's trust store can use it
without importing write/).  For one release this name is that very module (so setting
``fault_hook`` here still reaches the writer); import ``opencortex.atomic`` instead."""

from __future__ import annotations

import sys

from .. import atomic as _atomic

sys.modules[__name__] = _atomic
