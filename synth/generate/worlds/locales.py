"""Locales: the names, phone and address formats, time zones, currency and working week of a country.

Each locale is plain data plus small formatters; a world draws from it with its own seeded
`random.Random`, so the same seed gives the same people. Chinese names carry their pinyin, from
which mail addresses are made (as Chinese companies do).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class Locale:
    """One locale: language, name lists, formats and the working day."""

    code: str
    language: str  # "en" or "zh"
    given: tuple[tuple[str, str], ...]  # (name as written, ascii for the mail address)
    surnames: tuple[tuple[str, str], ...]
    confusable: tuple[tuple[tuple[str, str], tuple[str, str]], ...]  # surname pairs (shown, ascii) easy to mix up
    timezones: tuple[str, ...]
    cities: tuple[tuple[str, str, str], ...]  # (city, region or postcode area, phone area code)
    streets: tuple[str, ...]
    currency: str
    symbol: str
    domains: tuple[str, ...]
    work_start: int = 9
    work_end: int = 17
    lunch: tuple[int, int] | None = None  # hours with no meetings
    city_streets: tuple[tuple[str, ...], ...] = ()  # streets of each city, in `cities` order (else `streets`)

    def full_name(self, given: str, surname: str) -> str:
        """The name as people write it: surname first and unspaced in Chinese."""
        return f"{surname}{given}" if self.language == "zh" else f"{given} {surname}"

    def phone(self, rng: random.Random, area: str) -> str:
        """A phone number in the country's own format for an area code."""
        if self.code == "en-US":
            return f"+1 ({area}) {rng.randint(200, 989)}-{rng.randint(0, 9999):04d}"
        if self.code == "en-GB":
            if area == "20":
                return f"+44 20 {rng.randint(7000, 8999)} {rng.randint(0, 9999):04d}"
            return f"+44 {area} {rng.randint(100, 999)} {rng.randint(1000, 9999)}"
        if rng.random() < 0.5:
            return f"+86 1{rng.choice('3589')}{rng.randint(0, 9)} {rng.randint(0, 9999):04d} {rng.randint(0, 9999):04d}"
        return f"+86 {area} {rng.randint(1000, 9999)} {rng.randint(1000, 9999)}"

    def address(self, rng: random.Random) -> str:
        """A postal address in the country's order and format."""
        i = rng.randrange(len(self.cities))
        city, region, _ = self.cities[i]
        street = rng.choice(self.city_streets[i] if self.city_streets else self.streets)
        if self.code == "en-US":
            return f"{rng.randint(10, 9800)} {street}, {city}, {region} {rng.randint(10000, 99999)}"
        if self.code == "en-GB":
            return f"{rng.randint(1, 240)} {street}, {city} {region}{rng.randint(1, 20)} {rng.randint(1, 9)}" \
                   f"{rng.choice('ABDEFGHJLNPQRSTUWXYZ')}{rng.choice('ABDEFGHJLNPQRSTUWXYZ')}"
        return f"{city}{region}{street}{rng.randint(1, 999)}号"

    def date(self, d: date) -> str:
        """A date as the locale writes it in prose."""
        if self.language == "zh":
            return f"{d.year}年{d.month}月{d.day}日"
        if self.code == "en-GB":
            return f"{d.day} {d.strftime('%B')} {d.year}"
        return f"{d.strftime('%B')} {d.day}, {d.year}"

    def money(self, amount: float) -> str:
        """An amount as a document of this locale prints it (thousands separators, symbol first)."""
        return f"{self.symbol}{amount:,.2f}"


def _pairs(text: str) -> tuple[tuple[str, str], ...]:
    out = []
    for item in text.split():
        shown, _, ascii_ = item.partition("/")
        out.append((shown, ascii_ or shown.lower()))
    return tuple(out)


EN_GIVEN_US = _pairs("James Mary Robert Patricia Michael Jennifer David Linda William Elizabeth Richard Barbara Joseph "
                     "Susan Thomas Jessica Charles Sarah Christopher Karen Daniel Lisa Matthew Nancy Anthony Betty "
                     "Mark Sandra Donald Ashley Steven Kimberly Andrew Emily Paul Donna Joshua Michelle Kenneth Carol "
                     "Kevin Amanda Brian Melissa George Deborah Timothy Stephanie Ronald Rebecca Jason Laura Edward "
                     "Sharon Jeffrey Cynthia Ryan Kathleen Jacob Amy Gary Angela Nicholas Shirley Eric Anna Jonathan "
                     "Brenda Stephen Pamela Larry Emma Justin Nicole Scott Helen Brandon Samantha Benjamin Katherine "
                     "Gregory Christine Samuel Debra Frank Rachel Alexander Carolyn Raymond Janet Patrick Maria "
                     "Marcus Priya Diego Aisha Hiroshi Mei Carlos Fatima Andre Keisha Omar Lucia Tyrone Grace")
EN_GIVEN_GB = _pairs("Oliver Amelia Harry Isla George Ava Noah Mia Jack Ivy Leo Freya Oscar Lily Charlie Florence "
                     "Jacob Isabella Alfie Grace Freddie Sophia Arthur Olivia Thomas Emily Henry Poppy William Ella "
                     "Archie Evie Joshua Rosie Theo Willow James Phoebe Alexander Matilda Edward Imogen Samuel "
                     "Harriet Daniel Eleanor Joseph Alice Callum Niamh Rhys Siobhan Fraser Catriona Owen Megan "
                     "Ewan Bethan Rory Kirsty Gareth Sian Hamish Fiona Ravi Anjali Tariq Yasmin Kwame Adaeze "
                     "Declan Orla Liam Aoife Stuart Morag")
EN_SURNAMES = _pairs("Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez "
                     "Gonzalez Wilson Anderson Taylor Moore Jackson Martin Lee Perez Harris Clark Ramirez Lewis "
                     "Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson "
                     "Baker Hall Rivera Campbell Mitchell Carter Roberts Patel Okafor Kowalski Nakamura Fischer "
                     "Sullivan Brennan Hughes Price Bennett Wood Barnes Ross Henderson Coleman Jenkins Perry Powell "
                     "Long Patterson Butler Simmons Foster Bryant Alexander Russell Griffin Hayes Myers Ford "
                     "Hamilton Graham Wallace Cole West Jordan Owens Reynolds Ellis Harrison Gibson Marshall Murray "
                     "Thompson Thomson Reid Reed Stewart Stuart Phillips Philips Gray Grey Clarke Cooke Cook "
                     "Matthews Mathews Hansen Hanson Peterson Petersen Byrne Burns Walsh Welsh Fraser Frazier")
EN_CONFUSABLE = tuple(zip(
    _pairs("Thompson Reid Stewart Phillips Gray Clark Cook Matthews Hansen Peterson Byrne Walsh Fraser Allen Green "
           "Brown"),
    _pairs("Thomson Reed Stuart Philips Grey Clarke Cooke Mathews Hanson Petersen Burns Welsh Frazier Allan Greene "
           "Browne")))

ZH_GIVEN = _pairs("伟/wei 芳/fang 娜/na 敏/min 静/jing 丽/li 强/qiang 磊/lei 军/jun 洋/yang 勇/yong 艳/yan 杰/jie "
                  "娟/juan 涛/tao 明/ming 超/chao 秀英/xiuying 霞/xia 平/ping 刚/gang 桂英/guiying 浩然/haoran "
                  "子涵/zihan 欣怡/xinyi 梓轩/zixuan 雨桐/yutong 思远/siyuan 佳琪/jiaqi 宇航/yuhang 晓雯/xiaowen "
                  "建国/jianguo 海燕/haiyan 志强/zhiqiang 文博/wenbo 嘉怡/jiayi 俊杰/junjie 诗涵/shihan 一鸣/yiming "
                  "慧敏/huimin 天宇/tianyu 雅婷/yating 国庆/guoqing 春梅/chunmei 立新/lixin 晨曦/chenxi 若兰/ruolan")
ZH_SURNAMES = _pairs("王/wang 李/li 张/zhang 刘/liu 陈/chen 杨/yang 黄/huang 赵/zhao 吴/wu 周/zhou 徐/xu 孙/sun "
                     "马/ma 朱/zhu 胡/hu 郭/guo 何/he 林/lin 罗/luo 高/gao 郑/zheng 梁/liang 谢/xie 宋/song 唐/tang "
                     "许/xu 韩/han 冯/feng 邓/deng 曹/cao 彭/peng 曾/zeng 萧/xiao 田/tian 董/dong 潘/pan 袁/yuan "
                     "蒋/jiang 程/cheng 章/zhang 沈/shen 江/jiang 姜/jiang 叶/ye")
ZH_CONFUSABLE = tuple(zip(_pairs("陈/chen 章/zhang 江/jiang 王/wang 徐/xu 林/lin 程/cheng"),
                          _pairs("程/cheng 张/zhang 姜/jiang 汪/wang 许/xu 凌/ling 陈/chen")))

LOCALES: dict[str, Locale] = {
    "en-US": Locale(
        "en-US", "en", EN_GIVEN_US, EN_SURNAMES, EN_CONFUSABLE,
        ("America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles"),
        (("Chicago", "IL", "312"), ("Austin", "TX", "512"), ("Boston", "MA", "617"), ("Seattle", "WA", "206"),
         ("Denver", "CO", "303"), ("Atlanta", "GA", "404"), ("Columbus", "OH", "614"), ("Portland", "OR", "503")),
        ("Maple Avenue", "Oak Street", "Lakeshore Drive", "Main Street", "Elm Street", "Cedar Lane",
         "Washington Boulevard", "Park Avenue", "Highland Road", "Riverside Drive"),
        "USD", "$", (".com", ".io", ".co", ".net")),
    "en-GB": Locale(
        "en-GB", "en", EN_GIVEN_GB, EN_SURNAMES, EN_CONFUSABLE, ("Europe/London",),
        (("London", "EC", "20"), ("Manchester", "M", "161"), ("Leeds", "LS", "113"), ("Bristol", "BS", "117"),
         ("Glasgow", "G", "141"), ("Edinburgh", "EH", "131"), ("Cardiff", "CF", "29"), ("Birmingham", "B", "121")),
        ("High Street", "Station Road", "Church Lane", "Victoria Road", "Mill Lane", "Queens Road", "The Green",
         "Park Road", "Kings Avenue", "London Road"),
        "GBP", "£", (".co.uk", ".com", ".uk"), work_start=9, work_end=17, lunch=(12, 13)),
    "zh-CN": Locale(
        "zh-CN", "zh", ZH_GIVEN, ZH_SURNAMES, ZH_CONFUSABLE, ("Asia/Shanghai",),
        (("上海市", "浦东新区", "21"), ("北京市", "海淀区", "10"), ("深圳市", "南山区", "755"),
         ("杭州市", "西湖区", "571"), ("成都市", "高新区", "28"), ("广州市", "天河区", "20"), ("苏州市", "工业园区", "512")),
        ("张江路", "中关村大街", "科技园南路", "文三路", "天府大道", "体育西路", "星湖街", "世纪大道", "建国路"),
        "CNY", "¥", (".cn", ".com.cn", ".com"), work_start=9, work_end=18, lunch=(12, 14),
        city_streets=(("张江路", "世纪大道", "东方路"), ("中关村大街", "学院路", "知春路"), ("科技园南路", "深南大道", "科苑路"),
                      ("文三路", "天目山路", "古墩路"), ("天府大道", "天府三街", "益州大道"), ("体育西路", "天河路", "花城大道"),
                      ("星湖街", "现代大道", "金鸡湖大道"))),
}


def locale(code: str) -> Locale:
    """The locale with this code (ValueError naming the known ones)."""
    try:
        return LOCALES[code]
    except KeyError:
        raise ValueError(f"unknown locale {code!r}; known: {', '.join(LOCALES)}") from None
