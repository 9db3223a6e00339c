"""Rules that need the service's lists: SBP bank names resolved by phone, serviceId membership.

Validation takes the lists as inputs, so it runs without HTTP in tests; `payflow.intake.lookups`
fetches them for real. Each check is given the rows whose cells it reads broke no other rule
(`payflow.schemas.validation`): a row rejected for its amount is still looked up.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pandas as pd

from payflow.intake.lookups import SBP, BankInfo, BanksForPhones, ServiceInfo
from payflow.intake.problems import BankResolution, Problem, shown_value
from payflow.intake.reading import RawBatch
from payflow.schemas.column_rules import type_destination
from payflow.schemas.requisites import REQUISITES_RULES
from payflow.schemas.rules import RulesTable, load_rules
from payflow.schemas.text_checks import cells, distinct_keys, fullmatch_flags

NO_SERVICES_LIST = "the services list is unavailable"


def _problem(frame: pd.DataFrame, row: int, column: str, rule: str, message: str) -> Problem:
    value = str(frame.at[row, column]) if column in frame else ""
    return Problem(
        row, column, rule, message, str(frame.at[row, "externalId"]), shown_value(column, value)
    )


def sbp_phones(raw: RawBatch, table: RulesTable | None = None) -> list[str]:
    """The distinct phones of the batch's SBP rows that can be looked up, in file order.

    A phone the SBP requisites rule rejects is never looked up by `resolve_sbp_banks` (its row
    is told the phone is malformed, and has no banks list to check bankName in), so its banks
    list would be a request whose answer nobody reads. Where the SBP destinations of `table`
    disagree on the rule, the currency decides it, so every phone is kept: validation must
    never ask for a phone not fetched (`payflow.intake.lookups.prefetched`)."""
    frame = raw.frame
    if "paymentType" not in frame or "requisites" not in frame:
        return []
    phones = cells(frame["requisites"])[cells(frame["paymentType"]) == SBP]
    phones = phones[phones != ""]
    pattern = _sbp_phone_pattern(table or load_rules())
    if pattern is not None:
        phones = phones[fullmatch_flags(phones.tolist(), pattern)]
    return list(dict.fromkeys(str(phone) for phone in phones.tolist()))


def _sbp_phone_pattern(table: RulesTable) -> str | None:
    kind = type_destination(table, SBP)
    rule = table.destinations[kind].requisites_rule if kind >= 0 else ""
    return REQUISITES_RULES[rule].pattern if rule else None


@dataclass(frozen=True)
class BankCheck:
    """`resolve_sbp_banks`' answer: the bank id of each SBP row whose bankName cell does not
    already say it (a name resolved, an empty cell; a row of a bank id as written takes its
    cell), the resolutions, the rejects, and the rows whose phone has no banks list at hand
    (`unchecked`, their bankName as written): checked later by a process that can ask the
    service."""

    ids: dict[int, str]
    resolutions: list[BankResolution]
    problems: list[Problem]
    unchecked: list[int]


def bank_verdict(given: str, listed: Sequence[BankInfo]) -> tuple[str | None, str, str]:
    """The bank id `given` (an id or a name) stands for among a phone's `listed` banks, or
    None with the rule and message it breaks: the one judgement of intake and the paying
    process's check before sending."""
    if any(bank.id == given for bank in listed):
        return given, "", ""
    if not listed:
        return None, "sbp_no_bank_for_phone", "no bank offers SBP payouts to this phone number"
    named = [bank for bank in listed if bank.name.casefold() == given.strip().casefold()]
    if len(named) == 1:
        return named[0].id, "", ""
    if named:
        return (
            None,
            "sbp_bank_ambiguous",
            f"{len(named)} banks for this phone are named {given!r}; give the bank id",
        )
    return None, "sbp_bank_not_found", _not_found_message(given, listed)


def resolve_sbp_banks(
    frame: pd.DataFrame, rows: pd.Index, banks_for_phones: BanksForPhones | None
) -> BankCheck:
    """Bank id per SBP row whose cell does not say it (a name resolved), the resolutions, the
    rejects, and the rows left unchecked."""
    at = frame.index.get_indexer(rows)
    sbp_at = at[cells(frame["paymentType"])[at] == SBP]
    if len(sbp_at) == 0:
        return BankCheck({}, [], [], [])
    if banks_for_phones is None:
        message = "the banks list is not available, so bankName cannot be checked"
        sbp_rows = frame.index[sbp_at].tolist()
        refused = [_problem(frame, r, "bankName", "sbp_bank_unchecked", message) for r in sbp_rows]
        return BankCheck({}, [], refused, [])
    phones, givens = cells(frame["requisites"])[sbp_at], cells(frame["bankName"])[sbp_at]
    phone_codes, distinct = pd.factorize(phones, use_na_sentinel=False)
    banks = banks_for_phones(distinct.tolist())  # distinct, in file order
    # The usual row names a bank id listed for its phone: decided for every row at once, and
    # only the rest (names, unknown banks) walk the lists below.
    by_id = _names_listed_id(phone_codes, distinct.tolist(), givens, banks)
    sbp_index = frame.index[sbp_at]
    # A row whose cell is its bank id needs no entry, the instruction takes the cell: a dict of
    # a row per SBP row was tens of MB at the peak of a million-row validation. An empty cell
    # is kept, as the instruction sends "" (its cell reads as no bankName).
    ids = {int(sbp_index[i]): "" for i in np.flatnonzero(by_id & (givens == "")).tolist()}
    resolutions: list[BankResolution] = []
    problems: list[Problem] = []
    unchecked: list[int] = []
    for i in np.flatnonzero(~by_id).tolist():
        row, phone, given = int(sbp_index[i]), phones[i], givens[i]
        if phone not in banks:  # lists kept from a paying process: this phone was never asked
            if not given:
                ids[row] = given
            unchecked.append(row)
            continue
        bank_id, rule, message = bank_verdict(given, banks[phone])
        if bank_id is not None:
            ids[row] = bank_id
            resolutions.append(BankResolution(row, given, bank_id))
            continue
        column = "requisites" if rule == "sbp_no_bank_for_phone" else "bankName"
        problems.append(_problem(frame, row, column, rule, message))
    return BankCheck(ids, resolutions, problems, unchecked)


def _names_listed_id(
    phone_codes: npt.NDArray[np.intp],
    phones: list[str],
    givens: npt.NDArray[np.object_],
    banks: Mapping[str, Sequence[BankInfo]],
) -> npt.NDArray[np.bool_]:
    """True where the row's bankName is a bank id listed for its phone (`phone_codes` index
    `phones`). Each (phone, bankName) pair is a number: no tuple per row."""
    given_codes, distinct = pd.factorize(givens, use_na_sentinel=False)
    code_of = {given: code for code, given in enumerate(distinct.tolist())}
    width = len(code_of)
    listed = [
        at * width + code_of[bank.id]
        for at, phone in enumerate(phones)
        for bank in banks.get(phone, ())
        if bank.id in code_of
    ]
    pairs = phone_codes.astype(np.int64) * width + given_codes
    found: npt.NDArray[np.bool_] = np.isin(pairs, np.array(listed, dtype=np.int64))
    return found


SUGGESTED_BANKS = 3
LISTED_BANKS = 8  # named when no listed bank is close to what was written


def _not_found_message(given: str, listed: Sequence[BankInfo]) -> str:
    message = f"no bank for this phone has the id or name {given!r}"
    close = close_bank_names(given, [bank.name for bank in listed])
    if close:
        return message + "; did you mean " + " or ".join(repr(name) for name in close) + "?"
    # Nothing close ("Bank of Nowhere"): the banks that do serve this phone, to choose from.
    names = list(dict.fromkeys(bank.name or bank.id for bank in listed))
    shown = ", ".join(repr(name) for name in names[:LISTED_BANKS])
    more = f" and {len(names) - LISTED_BANKS} more" if len(names) > LISTED_BANKS else ""
    return f"{message}; the banks that serve this phone: {shown}{more}"


def close_bank_names(given: str, names: Sequence[str]) -> list[str]:
    """Up to three listed names close to `given`: containing it (ВТБ -> Банк ВТБ), then similar."""
    key = given.strip().casefold()
    if not key:
        return []
    by_key = {name.casefold(): name for name in names if name}
    containing = [name for k, name in by_key.items() if key in k or k in key]
    similar = difflib.get_close_matches(key, list(by_key), n=SUGGESTED_BANKS, cutoff=0.6)
    found = dict.fromkeys([*containing, *(by_key[k] for k in similar)])
    return list(found)[:SUGGESTED_BANKS]


def check_services(
    frame: pd.DataFrame,
    rows: pd.Index,
    services: Sequence[ServiceInfo] | None,
    *,
    pair_rows: pd.Index | None = None,
) -> tuple[list[Problem], list[str]]:
    """Rejects for a serviceId not in the list or not for the row's type and currency.

    `rows` have a well-formed serviceId; of those, only `pair_rows` (None: all) have a
    paymentType and currency fit to compare with the service's, and the others are checked
    for the serviceId being listed at all."""
    if "serviceId" not in frame:
        return [], []
    at = frame.index.get_indexer(rows)
    at = at[cells(frame["serviceId"])[at] != ""]
    if len(at) == 0:
        return [], []
    if services is None:
        return [], [f"serviceId of {len(at)} row(s) not checked: {NO_SERVICES_LIST}"]
    by_id = {service.id: service for service in services}
    key_cells = [cells(frame[c])[at] for c in _SERVICE_KEY]
    if pair_rows is not None:
        # Blank type and currency: not compared (service_verdict), since the row's own are
        # already rejected and a mismatch against them would only restate that.
        unfit = ~np.isin(frame.index[at], pair_rows)
        key_cells[1:] = [np.where(unfit, "", column) for column in key_cells[1:]]
    codes, keys = distinct_keys(*key_cells)
    verdicts = [service_verdict(by_id, *key) for key in keys]
    broken = {code: verdict for code, verdict in enumerate(verdicts) if verdict is not None}
    problems: list[Problem] = []
    for position in np.flatnonzero(np.isin(codes, list(broken))).tolist():
        rule, message = broken[int(codes[position])]
        row = int(frame.index[at[position]])
        problems.append(_problem(frame, row, "serviceId", rule, message))
    return problems, []


_SERVICE_KEY = ("serviceId", "paymentType", "currency")


def service_verdict(
    by_id: dict[int, ServiceInfo], service_id: str, payment_type: str, currency: str
) -> tuple[str, str] | None:
    """The rule and message a serviceId breaks for this type and currency, or None."""
    service = by_id.get(int(service_id))
    if service is None:
        return (
            "service_unknown",
            "serviceId is not among the payout services enabled for this account",
        )
    if not payment_type or not currency:
        return None  # the row's own type or currency is rejected: nothing to compare with
    if service.payment_type not in (None, payment_type) or service.currency not in (
        None,
        currency,
    ):
        return (
            "service_mismatch",
            f"serviceId {service.id} is a {service.payment_type or '?'} service in "
            f"{service.currency or '?'}, not {payment_type} in {currency}",
        )
    return None


def check_enabled_pairs(
    frame: pd.DataFrame, rows: pd.Index, services: Sequence[ServiceInfo] | None
) -> tuple[list[Problem], list[str]]:
    """Rejects for a paymentType and currency pair no enabled payout service pays."""
    enabled = {
        (s.payment_type, s.currency) for s in services or () if s.payment_type and s.currency
    }
    if not enabled:
        why = (
            NO_SERVICES_LIST
            if services is None
            else "the services list is silent on types and currencies"
        )
        return [], [f"paymentType and currency pairs not checked: {why}"]
    at = frame.index.get_indexer(rows)
    if "serviceId" in frame:
        # A given serviceId is checked against its own service's pair (service_mismatch).
        at = at[cells(frame["serviceId"])[at] == ""]
    # Each distinct pair is judged once: a million rows hold a handful of pairs.
    codes, keys = distinct_keys(cells(frame["paymentType"])[at], cells(frame["currency"])[at])
    off_at = at[np.array([key not in enabled for key in keys], dtype=bool)[codes]]
    off = frame.iloc[off_at]
    problems = []
    for row, payment_type, currency in zip(
        off.index.tolist(), off["paymentType"].tolist(), off["currency"].tolist(), strict=True
    ):
        offered = sorted(c for t, c in enabled if t == payment_type)
        also = f" (enabled {payment_type} currencies: {', '.join(offered)})" if offered else ""
        message = (
            f"no payout service enabled for this account pays {payment_type} in {currency}{also}"
        )
        problems.append(_problem(frame, row, "currency", "service_not_enabled", message))
    return problems, []
