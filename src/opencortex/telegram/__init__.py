"""The Telegram gateway (``opencortex telegram``): a long-polling bot over the kernel."""

from __future__ import annotations

from .gateway import DEFAULT_API_BASE, TelegramError, TelegramGateway, split_message

__all__ = ["DEFAULT_API_BASE", "TelegramError", "TelegramGateway", "split_message"]
