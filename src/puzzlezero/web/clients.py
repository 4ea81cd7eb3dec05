"""Who a request is, and how much of the server it may hold.

**Client keys.** A browser gets a signed cookie, :data:`COOKIE` (``<id>.<expiry>.<HMAC-SHA256 of
both>``), when it loads a page or makes a same-origin call without a valid one
(:class:`ClientKeys`); its requests are then one client of their own, so the students of a class
behind one NAT or proxy address are distinct clients, each with the per-client limits of the
waiting line. Keys are issued at a bounded rate per address (a token bucket of
``client_keys_per_minute``); beyond it, and for a request whose cookie is missing, forged or
expired, the client is its address (:func:`address_key`: IPv4 as it is, IPv6 by its /64). The
signing secret is random per process unless the operator gives one (``client_secret``).

**Holdings.** A request that adds work to the pool (a solve, a job, a value) takes its place in
one synchronous step, before anything is parsed (:meth:`Holdings.reserve`): its client key may
hold ``client_waiting + client_running`` such requests (being read, waiting or running), its
address ``address_limit`` whatever keys it holds, and all requests being read together no more
than the places left in the pool. The place turns into the ticket's when the pool admits it
(:meth:`Reservation.bind`) and is given back when the ticket ends.

**Rates.** The quick endpoints (validate, move, render, scramble, puzzles) take a token from the
client's bucket (:class:`Buckets`: ``rate_limit`` per second, ``rate_burst`` at once); an empty one
is answered 429 with the seconds until the next token (:class:`RateLimitError`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import math
import secrets
import threading
import time
from collections import Counter, OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING

from puzzlezero.web.line import ClientLimitError, QueueFullError

if TYPE_CHECKING:
    from puzzlezero.web.line import Ticket

__all__ = [
    "COOKIE",
    "COOKIE_SECONDS",
    "Buckets",
    "ClientKeys",
    "Holdings",
    "RateLimitError",
    "Reservation",
    "TokenBucket",
    "address_key",
]

#: the cookie that carries a browser's client key
COOKIE = "pz_client"
#: seconds a client key is valid (the browser keeps the cookie as long); then a new one is issued
COOKIE_SECONDS = 24 * 3600
#: keys (addresses, client keys) whose buckets are kept at most; the least recently used go first
MAX_BUCKETS = 65_536
#: the longest cookie value looked at (a valid one is about 70 characters)
MAX_COOKIE = 200


class RateLimitError(QueueFullError):
    """This client made more quick requests than ``rate_limit`` allows; ``retry_after``: whole
    seconds until its next one is accepted."""


def address_key(host: str) -> str:
    """The client an address stands for: an IPv4 address as it is (an IPv4-mapped IPv6 one too),
    an IPv6 address by its /64 (one home, one host), anything else (a test client's name) as it is.

    >>> address_key("2001:db8:1:2:aaaa::5"), address_key("::ffff:10.0.0.7")
    ('2001:db8:1:2::/64', '10.0.0.7')
    """
    bare = host.strip("[]").split("%", 1)[0]
    try:
        ip = ipaddress.ip_address(bare)
    except ValueError:
        return host
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class TokenBucket:
    """``capacity`` tokens, refilled at ``rate`` a second. :meth:`take` spends one if there is one;
    :meth:`charge` spends more, into debt, which later requests wait out."""

    __slots__ = ("capacity", "rate", "stamp", "tokens")

    def __init__(self, rate: float, capacity: float, now: float) -> None:
        self.rate = rate
        self.capacity = capacity
        self.tokens = capacity
        self.stamp = now

    def _refill(self, now: float) -> None:
        self.tokens = min(self.capacity, self.tokens + max(0.0, now - self.stamp) * self.rate)
        self.stamp = now

    def take(self, now: float) -> float:
        """Spend one token: 0.0 when there was one, else the seconds until there is (nothing spent)."""
        self._refill(now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate

    def charge(self, now: float, cost: float) -> None:
        """Spend ``cost`` more tokens, below zero if need be."""
        self._refill(now)
        self.tokens -= cost


class Buckets:
    """A :class:`TokenBucket` per key (at most ``most``, the least recently used forgotten first:
    a forgotten key starts again full). Safe to use from several threads."""

    def __init__(
        self,
        rate: float,
        capacity: float,
        most: int = MAX_BUCKETS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.capacity = capacity
        self.most = most
        self.clock = clock
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()
        self._lock = threading.Lock()

    def _bucket(self, key: str, now: float) -> TokenBucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(self.rate, self.capacity, now)
            while len(self._buckets) > self.most:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(key)
        return bucket

    def take(self, key: str) -> float:
        """Spend one of ``key``'s tokens: 0.0 when it had one, else the seconds until it has."""
        with self._lock:
            now = self.clock()
            return self._bucket(key, now).take(now)

    def charge(self, key: str, cost: float) -> None:
        """Spend ``cost`` more of ``key``'s tokens (into debt)."""
        with self._lock:
            now = self.clock()
            self._bucket(key, now).charge(now, cost)


class ClientKeys:
    """Issues and checks client keys: cookie values ``<id>.<expiry>.<signature>``, the signature an
    HMAC-SHA256 under ``secret`` of the id and the expiry (Unix seconds). At most ``per_minute``
    new keys a minute per address (as many at once), none when it is 0."""

    def __init__(
        self,
        secret: bytes,
        per_minute: int,
        clock: Callable[[], float] = time.time,
        lifetime: int = COOKIE_SECONDS,
    ) -> None:
        self._secret = secret
        self.per_minute = per_minute
        self.clock = clock
        self.lifetime = lifetime
        self.issued = Buckets(per_minute / 60.0, float(per_minute))
        """The new keys each address may still have: ``per_minute`` at once, refilled at that rate."""

    @classmethod
    def from_secret(cls, secret: str, per_minute: int) -> ClientKeys:
        """Keys under the operator's ``secret``; an empty one: a random secret for this process."""
        key = secret.encode() if secret else secrets.token_bytes(32)
        return cls(key, per_minute)

    def _sign(self, payload: str) -> str:
        digest = hmac.new(self._secret, payload.encode(), hashlib.sha256).digest()
        return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()

    def verify(self, value: str | None) -> str | None:
        """The key id of a cookie value that this server signed and that has not expired, else ``None``."""
        if not value or len(value) > MAX_COOKIE:
            return None
        parts = value.split(".")
        if len(parts) != 3 or not parts[1].isdigit():
            return None
        key, expires, signature = parts
        if not hmac.compare_digest(self._sign(f"{key}.{expires}"), signature):
            return None
        if int(expires) <= self.clock():
            return None
        return key

    def issue(self, address: str) -> str | None:
        """A new cookie value for a client at ``address``, or ``None`` when that address has had its
        share of new keys this minute (or keys are off)."""
        if self.per_minute <= 0 or self.issued.take(address) > 0:
            return None
        key = secrets.token_urlsafe(12)
        expires = int(self.clock()) + self.lifetime
        return f"{key}.{expires}.{self._sign(f'{key}.{expires}')}"


class Reservation:
    """A place taken by :meth:`Holdings.reserve`: held while the request is read, then by its
    ticket (:meth:`bind`) until the ticket ends. Leaving a ``with`` block before :meth:`bind` gives
    the place back."""

    def __init__(self, holdings: Holdings, key: str, address: str) -> None:
        self.holdings = holdings
        self.key = key
        self.address = address
        self.ticket: Ticket | None = None
        self._pending = True
        self._held = True

    def bind(self, ticket: Ticket) -> None:
        """The pool admitted the request as ``ticket``: the place is the ticket's until it ends."""
        self.ticket = ticket
        self._end_pending()
        self.holdings._tickets.setdefault(self.address, set()).add(ticket)
        ticket.outcome.add_done_callback(lambda _: self.release())

    def release(self) -> None:
        """Give the place back (once)."""
        self._end_pending()
        if not self._held:
            return
        self._held = False
        held = self.holdings
        held.by_key[self.key] -= 1
        held.by_address[self.address] -= 1
        for counter, name in ((held.by_key, self.key), (held.by_address, self.address)):
            if counter[name] <= 0:
                del counter[name]
        if self.ticket is not None:
            tickets = held._tickets.get(self.address)
            if tickets is not None:
                tickets.discard(self.ticket)
                if not tickets:
                    del held._tickets[self.address]

    def _end_pending(self) -> None:
        if self._pending:
            self._pending = False
            self.holdings.pending -= 1

    def __enter__(self) -> Reservation:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.ticket is None:
            self.release()


class Holdings:
    """How much each client key and each address holds of the pool: requests being read, and their
    tickets while they wait or run. Use from the event loop.

    ``client_limit``: what one key may hold (0: no limit here); ``address_limit``: what one address
    may hold whatever keys its clients have (0: no limit); ``ends_in(ticket)``: expected seconds
    until a ticket ends (the ``Retry-After`` of a refusal)."""

    def __init__(self, client_limit: int, address_limit: int, ends_in: Callable[[Ticket], float]) -> None:
        self.client_limit = client_limit
        self.address_limit = address_limit
        self.ends_in = ends_in
        self.by_key: Counter[str] = Counter()
        self.by_address: Counter[str] = Counter()
        self.pending = 0
        """Requests admitted and being read (not yet tickets)."""
        self._tickets: dict[str, set[Ticket]] = {}

    def reserve(self, key: str, address: str, room: int) -> Reservation:
        """Take a place for a request of client ``key`` at ``address``, or raise
        :class:`~puzzlezero.web.line.ClientLimitError` (the key or the address holds its share) or
        :class:`~puzzlezero.web.line.QueueFullError` (``room``, the places left in the pool, are
        all taken by requests being read). ``""`` (no key, no address) has no limits here."""
        if self.pending >= room:
            raise QueueFullError(
                f"the server is busy: the line is full with the requests it is reading ({self.pending}); "
                "try again in about 1 s",
                1,
            )
        if key and self.client_limit and self.by_key[key] >= self.client_limit:
            raise ClientLimitError(
                f"you already have {self.by_key[key]} requests waiting or running, the most one client may "
                f"have (client_waiting + client_running = {self.client_limit}, serve --client-waiting and "
                "--client-running); "
                "wait for one to end or cancel one",
                self._retry(key=key),
            )
        if address and self.address_limit and self.by_address[address] >= self.address_limit:
            raise ClientLimitError(
                f"your network address already has {self.by_address[address]} requests waiting or running, "
                f"the most one address may have (address_limit {self.address_limit}, serve --address-limit); "
                f"try again in about {self._retry(address=address)} s",
                self._retry(address=address),
            )
        self.by_key[key] += 1
        self.by_address[address] += 1
        self.pending += 1
        return Reservation(self, key, address)

    def _retry(self, key: str | None = None, address: str | None = None) -> int:
        """Whole seconds until the first of the address's (or key's) tickets is expected to end."""
        tickets = [
            t
            for addr, held in self._tickets.items()
            if address is None or addr == address
            for t in held
            if key is None or t.client == key
        ]
        if not tickets:
            return 1
        return max(1, math.ceil(min(self.ends_in(t) for t in tickets)))
