"""Words for the goals of kind-directed compositions that the wording layer's phrase book does not hold (a database
row, a tracker cell, a to-do, a note, a mail to a named colleague, the evidence that changes the figure), the
days' hints and the follow-up turn, in English and Chinese. Each states what is wanted, never which tool does it.
"""

from __future__ import annotations

import random
from typing import Any

GOALS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "x_row": ("add {ref} to the {db} with the amount", "log {ref} in the {db} database, amount and all",
                  "the {db} needs a line for {ref} with what it comes to"),
        "x_sheet": ("fill in the amount for {ref} in {path}", "our tracker ({path}) is missing the {ref} figure",
                    "put the {ref} amount into its row of {path}"),
        "x_todo": ("set me a to-do to settle {ref}, with the amount in it", "add a task for paying {ref} (amount in "
                   "the notes)", "I need a reminder to settle {ref}, amount included"),
        "x_note": ("keep a note of what {ref} comes to", "jot the {ref} figure down in my notes",
                   "make a note titled {ref} with the amount"),
        "x_mail": ("mail the figure to {who} ({email})", "send {who} <{email}> the amount",
                   "{who} ({email}) needs the number by mail, nobody else"),
        "x_code": ("it has to carry the right {word}", "don't forget the {word}", "and it needs our {word}"),
    },
    "zh": {
        "x_row": ("在{db}里登记{ref}和金额", "把{ref}记进{db}数据库，金额也写上", "{db}里要有{ref}这一条，写明金额"),
        "x_sheet": ("把{ref}的金额填进 {path}", "跟踪表（{path}）里{ref}的金额还空着，补上", "在 {path} 的{ref}那一行填上金额"),
        "x_todo": ("给我建一个结清{ref}的待办，写上金额", "加个待办提醒我付{ref}，备注里写金额"),
        "x_note": ("记一条笔记，写下{ref}的金额", "在笔记里记一下{ref}是多少钱", "建一条标题为{ref}的笔记，写上金额"),
        "x_mail": ("把金额发邮件给{who}（{email}）", "邮件告诉{who} <{email}> 这个金额，别发给其他人"),
        "x_code": ("要写上正确的{word}", "别忘了{word}", "还要带上我们的{word}"),
    },
}
EVIDENCE: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "image": ("there is also an extra charge on the receipt photo in {folder}", "add the extra charge from the "
                  "receipt they photographed ({folder})"),
        "audio": ("they left a voicemail about a deposit already paid ({folder}) - take that off",
                  "mind the voicemail in {folder}: part is paid already"),
        "pdf": ("a credit note came in against it ({folder}), net that off", "take off the credit note in {folder}"),
        "sheet": ("include the adjustment for it from {path}", "the adjustments workbook ({path}) has a line for it too"),
        "video": ("add the extra charge agreed on the recorded call ({folder})", "the call recording in {folder} "
                  "has an extra charge we agreed to - add it"),
        "web": ("plus their handling fee, which is on their website", "add the handling fee they publish online"),
    },
    "zh": {
        "image": ("{folder} 里的收据照片上还有一笔额外费用，要加上", "别漏了{folder}里收据上的附加费"),
        "audio": ("{folder} 里有他们的语音留言，说已付了定金，要扣掉", "注意{folder}的语音留言：有一部分已经付过了"),
        "pdf": ("{folder} 里有一张红字发票，要抵扣", "扣掉{folder}里的红字发票金额"),
        "sheet": ("再加上 {path} 里对应的调整额", "调整表（{path}）里也有这一笔"),
        "video": ("再加上通话录像（{folder}）里最后商定的附加费", "{folder} 的通话录像里有商定的附加费，要加上"),
        "web": ("再加上他们官网公布的手续费", "手续费按他们网站上公布的算"),
    },
}
DAYS = {"en": ("Morning. {party} may have sent a correction on {ref}; make sure everything we recorded still matches.",
               "New day. Before anything else, check {ref} is still right everywhere we put it.",
               "Quick one today: {party} said something about {ref} overnight - bring our records in line if needed."),
        "zh": ("早。{party}可能更正了{ref}，确认一下我们记录的都还对得上。", "新的一天，先核对{ref}在各处的记录是否仍然正确。",
               "{party}昨晚好像对{ref}有更正，需要的话把我们的记录都更新一下。")}
FOLLOW = {"en": ("Thanks. One more thing: {goal}.", "Great - and {goal}, please.", "Good. Also {goal}."),
          "zh": ("好的。还有一件事：{goal}。", "谢谢。另外{goal}。")}
DONE = {"en": ("Done: {ref} comes to {x}.", "Finished - {ref} is {x}."), "zh": ("已完成：{ref}为 {x}。",)}
OPEN = {"en": ("", "Hi, ", "Morning! ", "Quick one: "), "zh": ("", "你好，", "麻烦一下，")}


def goal_text(s: Any, g: Any, rng: random.Random) -> str:
    """One of this module's goals in words."""
    lang = s.lang
    slots = {"ref": s.facts.get("ref", ""), "db": g.slots.get("db", ""), "path": g.slots.get("path", ""),
             "word": g.slots.get("word", "")}
    if "person" in g.slots:
        p = g.slots["person"]
        slots.update(who=p.name if lang == "zh" else f"{p.name} ({p.title})", email=p.email)
    return rng.choice(GOALS[lang][g.kind]).format(**slots)


def evidence_text(s: Any, medium: str, path: str, rng: random.Random) -> str:
    """The hint that a second piece of evidence changes the figure."""
    folder = path.rsplit("/", 1)[0]
    exact = s.detail == "exact" and medium != "video"  # a clip is its folder: which frame matters is the task
    return rng.choice(EVIDENCE[s.lang][medium]).format(folder=path if exact else folder, path=path)


def join(parts: list[str], lang: str) -> str:
    """Sentences joined the way a chat message runs on."""
    parts = [p for p in parts if p]
    if lang == "zh":
        return "；".join(parts) + "。" if parts else ""
    return " ".join((p[0].upper() + p[1:]).rstrip(".") + ("" if p.endswith("?") else ".") for p in parts)
