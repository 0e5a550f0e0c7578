"""Money without float surprises: amounts are stored as integers in a currency's minor unit.

Records keep `*_minor` integers (cents for USD, yen for JPY, fils for KWD) next to an ISO 4217
currency code; tools accept amounts as JSON numbers or decimal text ("125000", "125,000.50") and
show them as exact decimal text ("125000.50"). A value with more decimals than the currency has,
a negative or non-finite value, or one above MAX_MINOR is refused with a clear error.

Records use the shared field types `MinorAmount` (an integer of minor units, 0..MAX_MINOR) and `Currency`
(an ISO 4217 code, upper-cased), and `major_to_minor` in a `model_validator(mode="before")` so that initial
data may give an amount in major units (`amount: 1250.50`) where the record stores minor ones (`amount_minor`).
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, Union

from pydantic import BeforeValidator, Field, StrictFloat, StrictInt, StrictStr

# ISO 4217 codes with their number of minor-unit digits (the common trading currencies).
CURRENCIES: dict[str, int] = {
    "AED": 2, "AUD": 2, "BHD": 3, "BRL": 2, "CAD": 2, "CHF": 2, "CNY": 2, "CZK": 2, "DKK": 2, "EUR": 2,
    "GBP": 2, "HKD": 2, "HUF": 2, "IDR": 2, "ILS": 2, "INR": 2, "JPY": 0, "KRW": 0, "KWD": 3, "MXN": 2,
    "NOK": 2, "NZD": 2, "PHP": 2, "PLN": 2, "SAR": 2, "SEK": 2, "SGD": 2, "THB": 2, "TRY": 2, "TWD": 2,
    "USD": 2, "ZAR": 2,
}
MAX_MINOR = 10**15  # far above any deal, and exact in a JSON number read as a double
_TEXT = re.compile(r"^(\d+|\d{1,3}(,\d{3})+)(\.\d+)?$")

AmountInput = Union[StrictInt, StrictFloat, StrictStr]
"""A tool argument holding an amount: a JSON number or decimal text."""


def currency_code(value: object, what: str = "currency") -> str:
    """The upper-case ISO 4217 code of `value`, or ValueError listing the known codes."""
    code = value.strip().upper() if isinstance(value, str) else ""
    if code not in CURRENCIES:
        raise ValueError(f"{what} {value!r} is not a supported ISO 4217 code; use one of {', '.join(CURRENCIES)}")
    return code


def to_minor(value: object, currency: str, what: str = "amount") -> int:
    """`value` (int, float or decimal text in major units) as an integer of minor units of `currency`."""
    digits = CURRENCIES[currency_code(currency)]
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal)):
        raise ValueError(f"{what} must be a number or decimal text such as 1250.50, got {type(value).__name__}")
    if isinstance(value, str):
        text = value.strip()
        if not _TEXT.match(text):
            raise ValueError(f"{what} {value!r} is not a plain amount; write digits with an optional decimal point, "
                             "e.g. 125000 or 125,000.50 (no currency symbols or suffixes like k)")
        text = text.replace(",", "")
    else:
        text = repr(value) if isinstance(value, float) else str(value)  # repr: the float's shortest exact text
    try:
        number = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"{what} {value!r} is not a number") from None
    if not number.is_finite():
        raise ValueError(f"{what} {value!r} is not a finite number")
    if number < 0:
        raise ValueError(f"{what} {value!r} is negative; amounts are zero or more")
    scaled = number.scaleb(digits)
    if scaled != scaled.to_integral_value():
        raise ValueError(f"{what} {value!r} has more than {digits} decimal places, which {currency} does not have")
    minor = int(scaled)
    if minor > MAX_MINOR:
        raise ValueError(f"{what} {value!r} is larger than the largest amount allowed "
                         f"({format_minor(MAX_MINOR, currency)} {currency})")
    return minor


def major_to_minor(data: Any, *pairs: tuple[str, str]) -> Any:
    """Raw record data with each `(major, minor)` pair's major-unit amount (e.g. `amount`, 1250.5) stored under
    its minor-unit key (`amount_minor`, 125050) in the data's `currency` (USD when it names none); a None amount
    stays None, and giving both keys of a pair is refused. Data that is not a dict is returned as it is."""
    if not isinstance(data, dict) or not any(major in data for major, _ in pairs):
        return data
    data = dict(data)
    for major, minor in pairs:
        if major in data:
            if minor in data:
                raise ValueError(f"give {major} or {minor}, not both")
            value = data.pop(major)
            data[minor] = None if value is None else to_minor(value, data.get("currency") or "USD", major)
    return data


MinorAmount = Annotated[int, Field(ge=0, le=MAX_MINOR)]
"""A record field holding an amount as an integer of its currency's minor unit (0 to MAX_MINOR)."""

Currency = Annotated[str, BeforeValidator(currency_code)]
"""A record field holding an ISO 4217 currency code (given in any case, stored upper-case)."""


def format_minor(minor: int, currency: str) -> str:
    """Exact decimal text of an amount in minor units, e.g. 12500050 USD -> '125000.50'."""
    digits = CURRENCIES[currency]
    if digits == 0:
        return str(minor)
    sign = "-" if minor < 0 else ""
    whole, frac = divmod(abs(minor), 10**digits)
    return f"{sign}{whole}.{frac:0{digits}d}"
