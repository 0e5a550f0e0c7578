"""Worlds: profession packs, locales, and the maker that draws an organisation and its people from them."""

from .locales import LOCALES, Locale, locale
from .maker import Drawn, draw_world
from .professions import PROFESSIONS, Profession, profession

__all__ = ["LOCALES", "PROFESSIONS", "Drawn", "Locale", "Profession", "draw_world", "locale", "profession"]
