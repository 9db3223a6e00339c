"""Named requisites rules the destination table refers to, and the account check key.

Each rule is a full-match pattern over the cell exactly as given: requisites are never
rewritten (design.md, invariant 3), so a space or a plus sign is a reject, not a cleanup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

_DOMAIN_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
EMAIL_PATTERN = rf"[A-Za-z0-9.!#$%&'*+/=?^_`{{|}}~-]+@{_DOMAIN_LABEL}(?:\.{_DOMAIN_LABEL})+"


@dataclass(frozen=True)
class RequisitesRule:
    """A pattern the whole requisites cell must match and the sentence shown when it does not."""

    name: str
    pattern: str
    message: str


REQUISITES_RULES: dict[str, RequisitesRule] = {
    rule.name: rule
    for rule in (
        RequisitesRule(
            "intl_wallet_phone",
            # E.164 allows at most 15 digits; below 10 no wallet number is plausible.
            r"[1-9][0-9]{9,14}",
            "wallet phone must be 10 to 15 digits in international form, "
            "without a plus sign or spaces",
        ),
        RequisitesRule(
            "ru_mobile_phone",
            r"(?:7|8)?9[0-9]{9}",
            "SBP phone must be a Russian mobile number, digits only: 79XXXXXXXXX, 89XXXXXXXXX "
            "or 9XXXXXXXXX",
        ),
        RequisitesRule(
            "ru_individual_account",
            # 40817: individuals, residents; 40820: individuals, non-residents. Deposit
            # accounts (423xx) are not accepted: payouts go to current accounts.
            r"408(?:17|20)810[0-9]{12}",
            "must be a 20-digit ruble account of an individual (starting 40817810 or 40820810)",
        ),
        RequisitesRule(
            "email_address",
            EMAIL_PATTERN,
            "must be an e-mail address",
        ),
    )
}

# (requisites rule, paymentType) pairs whose every accepted text is its own canonical form
# (schemas.recipients), trimmed and all: a valid row of such a destination needs no canonical
# form computed for the double-payment warning. Not SBP's phone (89... becomes 79...), nor an
# e-mail (its domain is lower-cased).
ACCEPTED_IS_CANONICAL = frozenset(
    {("intl_wallet_phone", "SIM"), ("ru_individual_account", "BANK_ACCOUNT")}
)

# Weights of the Bank of Russia check key over BIK digits 7-9 followed by the 20 account digits.
_KEY_WEIGHTS = (7, 1, 3) * 7 + (7, 1)


def account_key_matches(accounts: list[str], biks: list[str]) -> npt.NDArray[np.bool_]:
    """True where the account's check key fits the BIK; inputs must already be 20 and 9 digits."""
    # Here, not at the top: the rules table imports this module, and the commands that only read
    # amounts through it (`payflow status`, `batches`, `approve`) need no numpy (0.1-0.2 s).
    import numpy as np

    weights = np.array(_KEY_WEIGHTS, dtype=np.int64)
    if not accounts:
        return np.zeros(0, dtype=bool)
    # Fixed widths, so each list joins into one digit matrix with a row per account.
    account_digits = _digit_rows(accounts, 20)
    bik_digits = _digit_rows(biks, 9)[:, 6:]
    total = bik_digits @ weights[:3] + account_digits @ weights[3:]
    is_zero: npt.NDArray[np.bool_] = total % 10 == 0
    return is_zero


def _digit_rows(texts: list[str], width: int) -> npt.NDArray[np.int64]:
    import numpy as np  # as in account_key_matches

    digits = np.frombuffer("".join(texts).encode("ascii"), dtype=np.uint8).reshape(-1, width)
    return digits.astype(np.int64) - 48


def account_with_key(bik: str, account_without_key: str) -> str:
    """The account with its check key (digit 9) set to fit the BIK; the given digit 9 is ignored."""
    account_without_key = account_without_key[:8] + "0" + account_without_key[9:]
    digits = [int(c) for c in bik[-3:] + account_without_key]
    total = sum(d * w for d, w in zip(digits, _KEY_WEIGHTS, strict=True))
    key = (total * 3) % 10  # the key digit has weight 3, and 3 * 3 = 9 = -1 (mod 10)
    return account_without_key[:8] + str(key) + account_without_key[9:]
