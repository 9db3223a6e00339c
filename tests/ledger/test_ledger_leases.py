"""Named leases: two takers at once, one wins; an expired lease goes to the next taker."""

from __future__ import annotations

import threading
from datetime import timedelta

from ledger_support import FakeClock

from payflow.ledger import Ledger
from payflow.ledger.leases import release_lease, take_lease

TTL = timedelta(minutes=5)


def test_one_holder_at_a_time_until_it_expires_or_is_given_back(ledger_url, clock: FakeClock):
    with Ledger.open(ledger_url, clock=clock) as ledger:
        name = f"resume:{id(clock)}"
        assert take_lease(ledger, name, "watchdog-a", TTL)
        assert not take_lease(ledger, name, "watchdog-b", TTL)
        assert take_lease(ledger, name, "watchdog-a", TTL)  # its own: renewed
        clock.advance(seconds=301)
        assert take_lease(ledger, name, "watchdog-b", TTL)
        assert not take_lease(ledger, name, "watchdog-a", TTL)
        release_lease(ledger, name, "watchdog-a")  # not its holder: nothing happens
        assert not take_lease(ledger, name, "watchdog-a", TTL)
        release_lease(ledger, name, "watchdog-b")
        assert take_lease(ledger, name, "watchdog-a", TTL)


def test_of_many_takers_at_once_exactly_one_holds_it(ledger_url):
    with Ledger.open(ledger_url) as ledger:
        name = f"race:{threading.get_ident()}:{ledger_url[-8:]}"
        start = threading.Barrier(8)
        won: list[str] = []

        def take(holder: str) -> None:
            start.wait()
            if take_lease(ledger, name, holder, TTL):
                won.append(holder)

        threads = [threading.Thread(target=take, args=(f"w{n}",)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(won) == 1, won
