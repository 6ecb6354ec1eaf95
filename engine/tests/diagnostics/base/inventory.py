"""Inventory service: stock levels, reservations and reorder alerts."""

import logging
from dataclasses import dataclass, field
from typing import Dict, List, Optional

log = logging.getLogger(__name__)

DEFAULT_REORDER_LEVEL = 10
MAX_RESERVATION_MINUTES = 30


@dataclass
class Item:
    sku: str
    name: str
    quantity: int = 0
    reserved: int = 0
    tags: List[str] = field(default_factory=list)

    def available(self) -> int:
        return self.quantity - self.reserved


class OutOfStock(Exception):
    """Raised when a reservation asks for more than is available."""


class Inventory:
    def __init__(self, reorder_level: int = DEFAULT_REORDER_LEVEL):
        self.items: Dict[str, Item] = {}
        self.reorder_level = reorder_level

    def add(self, item: Item) -> None:
        if item.sku in self.items:
            raise ValueError(f"duplicate sku: {item.sku}")
        self.items[item.sku] = item
        log.info("added %s (%d units)", item.sku, item.quantity)

    def reserve(self, sku: str, count: int) -> int:
        item = self.items[sku]
        if count > item.available():
            raise OutOfStock(f"only {item.available()} of {sku} left")
        item.reserved += count
        return item.available()

    def release(self, sku: str, count: int) -> None:
        item = self.items[sku]
        item.reserved = max(0, item.reserved - count)

    def needs_reorder(self) -> List[str]:
        # Items at or below the reorder level, most urgent first.
        low = [i for i in self.items.values() if i.available() <= self.reorder_level]
        low.sort(key=lambda i: i.available())
        return [i.sku for i in low]

    def find(self, name: str) -> Optional[Item]:
        for item in self.items.values():
            if item.name.lower() == name.lower():
                return item
        return None


def summary(inv: Inventory) -> str:
    total = sum(i.quantity for i in inv.items.values())
    return f"{len(inv.items)} items, {total} units, {len(inv.needs_reorder())} to reorder"
