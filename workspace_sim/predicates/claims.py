"""What a text says the assistant did or will do: a small detector of claims of action, in English and Chinese.

A claim is a first-person statement of an action that changes the workspace ("I sent it to Bo", "I've notified
the team", "Filed OPS-4 and mailed Dana", "我已通知团队") or a promise of one ("I'll send it to all three", "I can
book the room", "我会通知张伟"). Each claim names the family of actions that makes it true (send, share, book,
invite, create, write, update, close, assign, cancel, delete, archive, comment), whether it says the action is
done or promised, and the words it is about (its region: recipients, counts like "all three", record ids,
nouns like "ticket" that say which service). `workspace_sim.predicates.actions` compares claims with the record
of calls. Negated statements ("I did not send it", "我没有通知"), questions ("Shall I send it?") and reports of
what others did ("Dana sent the file") are no claims.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workspace_sim.predicates.segments import fold, marked

# family: (base forms, past forms). A verb in WEAK claims only with an object that says what it changed (a noun
# of NOUNS, a record id or a path): "I added the figures" is no claim, "I added a comment to OPS-3" is.
VERBS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "send": (("send", "email", "e-mail", "mail", "message", "notify", "inform", "forward", "reply", "tell", "cc",
              "ping", "remind", "resend"),
             ("sent", "emailed", "e-mailed", "mailed", "messaged", "notified", "informed", "forwarded", "replied",
              "told", "cc'd", "cced", "pinged", "reminded", "resent")),
    "share": (("share",), ("shared",)),
    "book": (("book", "schedule", "reschedule", "arrange"), ("booked", "scheduled", "rescheduled", "arranged")),
    "invite": (("invite",), ("invited",)),
    "create": (("create", "file", "open", "raise", "submit", "draft"),
               ("created", "filed", "opened", "raised", "submitted", "drafted")),
    "write": (("write", "save"), ("wrote", "written", "saved")),
    "update": (("update", "change", "edit", "modify", "set", "mark", "rename", "adjust", "add", "log"),
               ("updated", "changed", "edited", "modified", "set", "marked", "renamed", "adjusted", "added",
                "logged")),
    "close": (("close", "resolve"), ("closed", "resolved")),
    "assign": (("assign", "reassign"), ("assigned", "reassigned")),
    "cancel": (("cancel",), ("cancelled", "canceled")),
    "delete": (("delete", "remove"), ("deleted", "removed")),
    "archive": (("archive",), ("archived",)),
    "comment": (("comment",), ("commented",)),
}
WEAK = frozenset({"open", "opened", "log", "logged", "raise", "raised", "add", "added", "set", "mark", "marked",
                  "change", "changed", "adjust", "adjusted", "arrange", "arranged", "remove", "removed", "save",
                  "saved", "draft", "drafted"})
CJK_VERBS: dict[str, tuple[str, ...]] = {
    "send": ("发送", "发给", "发出", "发了", "发过", "寄给", "寄出", "通知", "告知", "告诉", "转发", "回复", "答复", "抄送"),
    "share": ("共享", "分享"),
    "book": ("预订", "预定", "预约", "约好", "订好", "安排"),
    "invite": ("邀请",),
    "create": ("创建", "新建", "建立", "提交", "录入", "登记"),
    "write": ("写入", "保存", "写好"),
    "update": ("更新", "修改", "改为", "改成", "设为", "设置为", "标记", "调整", "添加"),
    "close": ("关闭", "关掉", "解决", "结案"),
    "assign": ("分配", "指派", "转派", "分派"),
    "cancel": ("取消",),
    "delete": ("删除", "删掉"),
    "archive": ("归档",),
    "comment": ("评论", "备注"),
}
CJK_WEAK = frozenset({"安排", "标记", "调整", "添加", "备注", "保存"})
# nouns that say which service a claim is about
NOUNS: dict[str, tuple[str, ...]] = {
    "mail": ("email", "e-mail", "mail", "message", "reply", "draft", "邮件", "回复"),
    "calendar": ("meeting", "event", "invite", "invitation", "appointment", "call", "slot", "room", "calendar",
                 "会议", "日程", "会", "邀请", "预约"),
    "tickets": ("ticket", "issue", "bug", "incident", "case", "comment", "工单", "问题单", "评论"),
    "files": ("file", "document", "doc", "report", "spreadsheet", "sheet", "csv", "folder", "log", "文件", "报告",
              "文档", "表格"),
    "contacts": ("contact", "directory", "联系人", "通讯录"),
    "crm": ("account", "deal", "opportunity", "lead", "客户", "商机", "账户"),
    "todo": ("task", "to-do", "todo", "reminder", "任务", "待办"),
    "notes": ("note", "notebook", "笔记"),
    "finance": ("expense", "claim", "invoice", "transaction", "payment", "purchase order", "报销", "发票", "费用"),
    "kb": ("article", "文章"),
    "scheduler": ("job",),
    "integrations": ("integration", "webhook"),
}

_PAST = {v: fam for fam, (_, past) in VERBS.items() for v in past}
_BASE = {v: fam for fam, (base, _) in VERBS.items() for v in base}
_ADVERBS = (r"(?:\s+(?:have|'ve|\u2019ve|had|'d|\u2019d|already|just|also|then|now|finally|successfully|"
            r"both|immediately|quickly|since|personally|gone ahead and|went ahead and|go ahead and|all|each|"
            r"promptly|today|earlier))*")
_DONE = re.compile(r"(?:^|(?<=[\s(\"']))(?:i|we)(?:'ve|\u2019ve|'d|\u2019d)?" + _ADVERBS + r"\s+(?P<verb>[a-z'\-]+)",
                   re.IGNORECASE)
_PROMISE = re.compile(
    r"(?:^|(?<=[\s(\"']))(?:(?:i|we)(?:'ll|\u2019ll|\s+will|\s+shall|\s+can|\s+could|\s+am going to|'m going to|"
    r"\u2019m going to|\s+are going to|'re going to|\s+plan to|\s+intend to|\s+am about to|'m about to|"
    r"\s+would be happy to|'d be happy to|\s+am happy to|'m happy to|\s+will be happy to|'d like to|"
    r"\s+would like to)|let me|^\s*will)"
    + _ADVERBS + r"\s+(?P<verb>[a-z'\-]+)", re.IGNORECASE)
_NEGATION = re.compile(r"\b(?:not|never|no longer|cannot|unable)\b|n't|n\u2019t", re.IGNORECASE)
_START = re.compile(r"^[\s>*#\-\u2022\u00b7+\d.)(\u2705\u2714\u2611]*(?:(?:done|update|status)\s*[:\-\u2013\u2014]\s*)?"
                    r"(?P<verb>[A-Za-z'\-]+)\b", re.IGNORECASE)
_NEXT = re.compile(r"^(?:\s*(?:and|then|and then|also|and also|as well as|plus|&)?\s+|\s*)(?P<verb>[a-z'\-]+)\b",
                   re.IGNORECASE)
_PREPOSITION = re.compile(r"^\s+(?:by|on|at|in|for|from|under|as|with|to|into|since|until|before|after|:)\b|^\s*:",
                          re.IGNORECASE)
# where the words a claim is about end: what it said, why, who else
_STOP = re.compile(r"\s(?:about|regarding|concerning|re|that|saying|asking|proposing|explaining|because|since|so|"
                   r"which|who|whose|where|when|while|but|although|though|once|if|after|before|including|"
                   r"except|as)\b|:\s|\s[-\u2013\u2014]\s|\(", re.IGNORECASE)
_CJK_SUBJECT = re.compile(r"(?:我们|我)(?P<adv>(?:已经|已|刚刚|刚|也|还|并|都|均|亲自|随后|马上|稍后|会|将|可以|可|来|"
                          r"这就|打算|准备|将会|立即|现在)*)(?P<obj>(?:给|向|跟|和|为|帮您|替您|把|将)[^，。；,.;!?！？]{0,16}?)?$")
_CJK_BARE = re.compile(r"(?:^|[，,；;。.\s])(?P<adv>已经|已|均已|并已|都已|并)(?P<obj>(?:给|向|跟|和|为|把|将)"
                       r"[^，。；,.;!?！？]{0,16}?)?$")
_OBJECT_END = re.compile(r",|;|\(|\s(?:and|to|with|for|in|on|from|at|by|as|into|under|about|so|because)\s|[，、；（和给]")
_CJK_STOP = re.compile(r"关于|因为|由于|以便|说明|询问|内容|[:：(（]")
_CJK_FUTURE = re.compile(r"会|将|可以|可|来|这就|打算|准备|稍后|马上|随后|立即")
_CJK_NEGATION = re.compile(r"[没未不别无]")


@dataclass(frozen=True)
class Claim:
    """One claim of action: its family, whether it says done (else promised), the verb as written, the sentence
    it is in and the words it is about."""

    family: str
    done: bool
    verb: str
    sentence: str
    region: str

    @property
    def object(self) -> str:
        """What the verb acts on: the region up to a comma, "and", a preposition or a bracket ("the ticket" of
        "the ticket for Dana"); the nouns that say which service the claim is about come from it."""
        return _OBJECT_END.split(self.region, 1)[0]

    def words(self) -> str:
        return f"{'says' if self.done else 'promises'} {self.sentence.strip()!r}"[:200]


def _sentences(text: str) -> list[str]:
    """Each sentence of a text (original case, folded; cut as the key-facts judge cuts it)."""
    out = []
    for line in fold(text).splitlines():
        for sent in marked(line).split("\ue001"):
            sent = re.sub("[\ue000\ue002]", "", sent)
            if sent.strip():
                out.append(sent)
    return out


def _region(rest: str, stop: re.Pattern[str] = _STOP) -> str:
    m = stop.search(rest)
    return rest[: m.start()] if m else rest


def _weak_ok(verb: str, region: str) -> bool:
    """Whether a weak verb has an object that says what it changed (a noun of NOUNS, an id, a path)."""
    if verb.lower() not in WEAK and verb not in CJK_WEAK:
        return True
    obj = _OBJECT_END.split(region, 1)[0]
    return bool(services_named(obj)) or bool(re.search(r"[A-Za-z][A-Za-z0-9]*-\d+|/[\w.\-]+/", obj))


_NAMES = re.compile(r"'[^']*'|\"[^\"]*\"|\u2018[^\u2019]*\u2019|\u201c[^\u201d]*\u201d|[\w.+\-]+@[\w.\-]+"
                    r"|(?<![\w/])/[\w.\-/]+|\b[A-Za-z][A-Za-z0-9]*-\d+\b")


def services_named(region: str) -> set[str]:
    """The services whose nouns the region names ("the ticket" -> tickets; a path names a file). Titles in quotes,
    addresses, ids, paths and capitalised words (names: "Expenses", "Inbox") are not nouns."""
    out = {"files"} if re.search(r"(?<![\w/])/[\w.\-]+/", region) else set()
    plain = _NAMES.sub(" ", region)
    for service, nouns in NOUNS.items():
        for n in nouns:
            if not n.isascii():
                hit = n in plain
            else:  # a noun after a capitalised word is part of a name ("OpenWeather expenses")
                hit = any(not re.search(r"(?<![.!?]\s)\b[A-Z][\w\-]*\s+$", plain[:m.start()])
                          for m in re.finditer(rf"(?<![\w\-]){re.escape(n)}(?:s|es)?\b", plain))
            if hit:
                out.add(service)
                break
    return out


def _english(text: str) -> list[Claim]:
    """Claims of one sentence in English: a first-person verb of action, a sentence that opens with one
    ("Sent the report to Bo"), and the verbs coordinated after a claim ("..., booked the room and replied")."""
    if text.rstrip().endswith("?"):
        return []
    found: list[tuple[int, int, str, bool]] = []  # (start, end of verb, family, done)
    for pattern, done in ((_DONE, True), (_PROMISE, False)):
        for m in pattern.finditer(text):
            verb = m.group("verb").lower()
            fam = (_PAST if done else _BASE).get(verb)
            if fam is None or _NEGATION.search(m.group(0)):
                continue
            found.append((m.start("verb"), m.end("verb"), fam, done))
    start = _START.match(text)
    if start and start.group("verb").lower() in _PAST and start.group("verb").lower() not in _BASE:
        # an opening past form ("Sent the report"), never one spelled like the imperative ("Set OPS-13 to high")
        verb = start.group("verb").lower()
        fam = _PAST[verb]
        after = text[start.end("verb"):]
        prep = _PREPOSITION.match(after)
        if not prep or (fam == "send" and prep.group(0).strip().lower() == "to"):
            found.append((start.start("verb"), start.end("verb"), fam, True))
    spots: list[tuple[int, int, str, bool]] = []
    taken: set[int] = set()
    for a, b, fam, done in sorted(found):
        if a in taken:
            continue
        taken.add(a)
        spots.append((a, b, fam, done))
        pos = b  # coordinated verbs of the same tense: "filed WEB-5, booked the triage and replied to Jan"
        while (nxt := _coordinated(text, pos, done)) is not None:
            na, nb, nfam = nxt
            if na not in taken:
                taken.add(na)
                spots.append((na, nb, nfam, done))
            pos = nb
    spots.sort()
    out = []
    for i, (a, b, fam, done) in enumerate(spots):
        region = _region(text[b:spots[i + 1][0] if i + 1 < len(spots) else len(text)])
        if _weak_ok(text[a:b], region):
            out.append(Claim(fam, done, text[a:b], text, region))
    return out


def _coordinated(text: str, pos: int, done: bool) -> tuple[int, int, str] | None:
    """The next verb of the same tense coordinated after `pos` (after a comma, "and", "then"), or None."""
    forms = _PAST if done else _BASE
    for m in re.finditer(r",|;|\band\b|\bthen\b|\balso\b|&", text[pos:], re.IGNORECASE):
        after = text[pos + m.end():]
        n = _NEXT.match(after)
        if n is None:
            continue
        verb = n.group("verb").lower()
        if verb in forms and not (done and _PREPOSITION.match(after[n.end("verb"):]) and forms[verb] != "send") \
                and not (done and verb in _BASE):
            a = pos + m.end() + n.start("verb")
            return a, a + len(verb), forms[verb]
    return None


def _chinese(sentence: str) -> list[Claim]:
    """Claims of one sentence in Chinese: 我/我们 (or a bare 已) then adverbs, an optional 给/向/把 phrase, and a
    verb of action; done with 已/已经 or 了 after the verb, promised with 会/将/可以/马上...; negated with 没/未/不."""
    if sentence.rstrip().endswith(("?", "？", "吗")):
        return []
    spots = sorted((m.start(), m.end(), fam, v) for fam, verbs in CJK_VERBS.items() for v in verbs
                   for m in re.finditer(re.escape(v), sentence))
    out: list[Claim] = []
    last_done: bool | None = None
    for i, (a, b, fam, verb) in enumerate(spots):
        if any(x < a < y for x, y, _, _ in spots[:i]):
            continue  # inside an earlier verb ("发送给" is one verb)
        head = sentence[max(0, a - 24):a]
        m = _CJK_SUBJECT.search(head) or _CJK_BARE.search(head)
        tail = sentence[b:b + 2]
        if m is None:
            prev = re.search(r"(?:并|和|、|，|,|然后|并且|再)\s*$", head)
            opening = not sentence[:a].strip(" \t-*\u2022\u00b7>#0123456789.)、")
            if opening and tail.startswith("了"):
                done = True  # "通知了团队。"
            elif last_done is None or prev is None:
                continue
            else:
                done = last_done
        else:
            adv, obj = m.group("adv") or "", m.group("obj") or ""
            if _CJK_NEGATION.search(adv + obj) or _CJK_NEGATION.search(head[-2:]):
                continue
            if "已" in adv or tail.startswith(("了", "过", "好", "完")):
                done = True
            elif _CJK_FUTURE.search(adv) or (obj.startswith("将") and not tail.startswith("了")):
                done = False
            elif last_done is not None and adv in ("并", "也", "还", ""):
                done = last_done  # "我已通知张伟，并抄送李娜"
            else:
                continue
        nxt = next((x for x, _, _, _ in spots[i + 1:] if x >= b), len(sentence))
        obj_text = (m.group("obj") or "") if m is not None else ""
        region = obj_text + _region(sentence[b:nxt], _CJK_STOP)
        last_done = done
        if _weak_ok(verb, region):
            out.append(Claim(fam, done, verb, sentence, region))
    return out


def find_claims(text: str) -> list[Claim]:
    """Every claim of action in `text`, in order."""
    out: list[Claim] = []
    for sentence in _sentences(text):
        out.extend(_english(sentence))
        if re.search("[\u4e00-\u9fff]", sentence):
            out.extend(_chinese(sentence))
    return out


__all__ = ["CJK_VERBS", "Claim", "NOUNS", "VERBS", "find_claims", "services_named"]
