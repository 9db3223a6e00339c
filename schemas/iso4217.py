"""Active ISO 4217 currency codes (alphabetic), as a frozen set for membership checks, and the
minor units (decimals) of each."""

from __future__ import annotations

from decimal import Decimal
from functools import cache

_CODES = """
    AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD
    BTN BWP BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK DOP
    DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR
    IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD
    MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB
    PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD
    SSP STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS
    VED VES VND VUV WST XAF XAG XAU XBA XBB XBC XBD XCD XCG XDR XOF XPD XPF XPT XSU XTS XUA
    YER ZAR ZMW ZWG ZWL
    """
ISO_4217_CODES = frozenset(_CODES.split())

# ISO 4217 minor units that are not 2; every other currency has 2.
_ZERO = "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX UYI VND VUV XAF XOF XPF"
_THREE = "BHD IQD JOD KWD LYD OMR TND"
_DECIMALS = {
    **dict.fromkeys(_ZERO.split(), 0),
    **dict.fromkeys(_THREE.split(), 3),
    **dict.fromkeys(("CLF", "UYW"), 4),
}


def currency_decimals(currency: str | None) -> int:
    """Minor units of the currency (2 when unknown)."""
    return _DECIMALS.get((currency or "").upper(), 2)


def shown_decimals(currency: str | None) -> int:
    """Decimals an amount of the currency is shown with: none for a currency every destination of
    the rules table pays in whole units (KES, GHS, TZS, UGX, XOF: "7300", not "7300.00"), else
    its ISO 4217 minor units. Showing only: validation keeps `currency_decimals`."""
    code = (currency or "").upper()
    return 0 if code in _whole_by_rules() else currency_decimals(code)


@cache
def _whole_by_rules() -> frozenset[str]:
    from payflow.schemas.rules import ANY_CURRENCY, load_rules  # the rules import this module

    steps: dict[str, list[int]] = {}
    for rule in load_rules().destinations:
        if rule.currency != ANY_CURRENCY:
            steps.setdefault(rule.currency, []).append(rule.amount_step_cents)
    return frozenset(c for c, cents in steps.items() if all(s % 100 == 0 for s in cents))


def quantized(amount: Decimal, currency: str | None) -> Decimal:
    """The amount with exactly the decimals it is shown with (`shown_decimals`); never rounds
    away a real fraction."""
    for decimals in (shown_decimals(currency), currency_decimals(currency)):
        exponent = Decimal(1).scaleb(-decimals)
        if amount == amount.quantize(exponent):
            return amount.quantize(exponent)
    return amount  # more decimals than the currency has: shown as they are, never rounded


def amount_text(amount: Decimal, currency: str | None) -> str:
    """An amount as an operator reads it anywhere (terminal, page, markdown, CSV cell): the
    currency's decimals, no grouping, never rounded: "250.00" RUB, "1500" XOF, "1.250" KWD,
    "7300" KES (paid in whole units), "7300.50" KES all the same when it has cents."""
    return format(quantized(amount, currency), "f")


def money_words(amount: Decimal | None, currency: str | None) -> str:
    """An amount in a sentence, as the reports write it: "250.00 RUB", "1500 XOF"."""
    shown = "?" if amount is None else amount_text(amount, currency)
    return f"{shown} {currency or '?'}"
