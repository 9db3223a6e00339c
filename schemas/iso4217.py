"""Active ISO 4217 currency codes (alphabetic), as a frozen set for membership checks, and the
minor units (decimals) of each."""

from __future__ import annotations

from decimal import Decimal

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


def quantized(amount: Decimal, currency: str | None) -> Decimal:
    """The amount with exactly the currency's decimals; never rounds away a real fraction."""
    exponent = Decimal(1).scaleb(-currency_decimals(currency))
    if amount == amount.quantize(exponent):
        return amount.quantize(exponent)
    return amount  # more decimals than the currency has: shown as they are, never rounded


def amount_text(amount: Decimal, currency: str | None) -> str:
    """An amount as an operator reads it anywhere (terminal, page, markdown, CSV cell): the
    currency's decimals, no grouping, never rounded: "250.00" RUB, "1500" XOF, "1.250" KWD."""
    return format(quantized(amount, currency), "f")


def money_words(amount: Decimal | None, currency: str | None) -> str:
    """An amount in a sentence, as the reports write it: "250.00 RUB", "1500 XOF"."""
    shown = "?" if amount is None else amount_text(amount, currency)
    return f"{shown} {currency or '?'}"
