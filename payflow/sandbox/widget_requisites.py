"""The recipient's bank details in the widget: the spec's validation rules and their storage.

Rules (checked while typing by the page and again here on save): full name in Cyrillic, phone
+7XXXXXXXXXX, BIK from the bank list, 20-digit ruble account of an individual whose check key
matches the BIK, optional birth date giving an age from 14 to 120. Messages are in Russian:
the page shows them as they are.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import date
from functools import cache
from importlib import resources
from typing import Any

NAME = re.compile(r"[А-ЯЁа-яё]+(?:-[А-ЯЁа-яё]+)*(?: [А-ЯЁа-яё]+(?:-[А-ЯЁа-яё]+)*)+")
PHONE = re.compile(r"\+7[0-9]{10}")
BIK = re.compile(r"[0-9]{9}")
# 408 17/20: current account of an individual (resident / non-resident); 810: rubles.
INDIVIDUAL_RUB_ACCOUNT = re.compile(r"408(?:17|20)810[0-9]{12}")
BIRTH_DATE = re.compile(r"([0-9]{2})\.([0-9]{2})\.([0-9]{4})")
KEY_WEIGHTS = (7, 1, 3)
MIN_AGE, MAX_AGE = 14, 120
MAX_NAME_LENGTH = 255
FIELDS = ("fullName", "phone", "bik", "account", "birthDate")


@cache
def banks() -> tuple[tuple[str, str], ...]:
    """(BIK, bank name) of every bank the widget pays to."""
    text = resources.files("payflow.sandbox").joinpath("data/widget_banks.json").read_text("utf-8")
    return tuple((str(b["bik"]), str(b["name"])) for b in json.loads(text))


def bank_name(bik: str) -> str | None:
    """The bank's name for a BIK of the list, else None."""
    return dict(banks()).get(bik)


def account_key_matches(bik: str, account: str) -> bool:
    """The Bank of Russia check key: BIK digits 7-9 then the account, weights 7-1-3, sum % 10."""
    digits = bik[-3:] + account
    total = sum(int(d) * KEY_WEIGHTS[i % 3] for i, d in enumerate(digits))
    return total % 10 == 0


@dataclass(frozen=True)
class Requisites:
    """Bank details the widget stores per merchant and userId."""

    full_name: str
    phone: str
    bik: str
    account: str
    birth_date: date | None

    def summary(self) -> dict[str, str]:
        """What the page may show of stored details: bank, last four digits, name."""
        return {
            "bankName": bank_name(self.bik) or "",
            "last4": self.account[-4:],
            "fullName": self.full_name,
        }


def _clean(data: dict[str, Any], name: str) -> str:
    value = data.get(name)
    return value.strip() if isinstance(value, str) else ""


def check_requisites(data: dict[str, Any], today: date) -> tuple[Requisites | None, dict[str, str]]:
    """The details, or None with a Russian message per broken field."""
    errors: dict[str, str] = {}
    full_name = " ".join(_clean(data, "fullName").split())
    phone = re.sub(r"[\s()-]", "", _clean(data, "phone"))
    bik = _clean(data, "bik")
    account = re.sub(r"\s", "", _clean(data, "account"))
    if not NAME.fullmatch(full_name) or len(full_name) > MAX_NAME_LENGTH:
        errors["fullName"] = "Укажите фамилию и имя кириллицей"
    if not PHONE.fullmatch(phone):
        errors["phone"] = "Телефон в формате +7XXXXXXXXXX"
    if not BIK.fullmatch(bik) or bank_name(bik) is None:
        errors["bik"] = "Выберите банк из списка (БИК из 9 цифр)"
    if not re.fullmatch(r"[0-9]{20}", account):
        errors["account"] = "Номер счёта — 20 цифр"
    elif not INDIVIDUAL_RUB_ACCOUNT.fullmatch(account):
        errors["account"] = "Нужен рублёвый счёт физического лица (40817810… или 40820810…)"
    elif "bik" not in errors and not account_key_matches(bik, account):
        errors["account"] = "Номер счёта не соответствует БИК банка"
    birth_date, birth_error = _birth_date(_clean(data, "birthDate"), today)
    if birth_error:
        errors["birthDate"] = birth_error
    if errors:
        return None, errors
    return Requisites(full_name, phone, bik, account, birth_date), {}


def _birth_date(text: str, today: date) -> tuple[date | None, str | None]:
    if not text:
        return None, None
    match = BIRTH_DATE.fullmatch(text)
    try:
        if match is None:
            raise ValueError(text)
        day, month, year = (int(part) for part in match.groups())
        born = date(year, month, day)
    except ValueError:
        return None, "Дата в формате ДД.ММ.ГГГГ"
    age = today.year - born.year - ((today.month, today.day) < (born.month, born.day))
    if not MIN_AGE <= age <= MAX_AGE:
        return None, "Возраст получателя — от 14 до 120 лет"
    return born, None


class WidgetAccounts:
    """Stored details per (merchantId, userId); only touched from the app's event loop."""

    def __init__(self) -> None:
        self._by_user: dict[tuple[str, str], Requisites] = {}

    def get(self, merchant_id: str, user_id: str) -> Requisites | None:
        """The stored details of a client, if any."""
        return self._by_user.get((merchant_id, user_id))

    def save(self, merchant_id: str, user_id: str, requisites: Requisites) -> bool:
        """Store the details; True when they replaced earlier ones."""
        replaced = (merchant_id, user_id) in self._by_user
        self._by_user[(merchant_id, user_id)] = requisites
        return replaced
