"""Phrase tables of the wording layer: several phrasings per goal, opener and closing, per language.

Slots in braces are filled by `request.render`: {doc} (the document, by path or by description),
{fig} (what the figure is called), {who} (a colleague, with enough to tell them from a namesake),
{party}, {contact}, {key}, {day}, {meeting}, {word}. Phrasings state what the user wants done, not
which tools to use.
"""

from __future__ import annotations

GOALS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "report": ("put the {fig} for {doc} in a short note at {path}",
                   "I need a one-line write-up of the {fig} on {doc} - save it as {path}",
                   "leave a short report of the {fig} on {doc} in {path} so I can point people at it",
                   "write down the {fig} from {doc} in {path}",
                   "make sure {path} has the {fig} for {doc}"),
        "notify": ("let {who} know the {fig}", "make sure {who} has the {fig} by mail",
                   "{who} needs the {fig} - drop them an email", "send the {fig} over to {who}",
                   "could you email {who} with the {fig}", "pass the {fig} on to {who} (email is fine)"),
        "reply": ("get back to {contact} at {party} in the same thread with what's still outstanding",
                  "answer {contact}'s mail confirming the remaining balance",
                  "reply to {contact} so {party} knows what remains to be paid",
                  "write back to {contact} on that thread with the balance"),
        "ticket": ("note the {fig} on the {key} ticket", "record the {fig} on our ticket for it",
                   "update the ticket tracking {doc} with the {fig}", "log the {fig} against the queue ticket"),
        "meet": ("find half an hour with {who} on {day} for a {meeting}",
                 "set up a 30-minute {meeting} with {who} on {day} when they're free",
                 "book {who} for a quick {meeting} on {day} - something that doesn't clash",
                 "put a {meeting} with {who} in the calendar for {day}, thirty minutes, within working hours"),
        "code": ("the mail has to carry the right {word}", "don't forget the {word} in that email",
                 "the email needs our {word} on it"),
        "outside": ("copy {contact} at {party} on it too, they've been asking", "and send it to {contact} ({party}) as well",
                    "{contact} from {party} wants the number too - include them"),
        "standing": ("if anyone asks about it this week, answer them with the current figure",
                     "this week, whoever asks about it gets the up-to-date number",
                     "people may ask about it over the next few days; reply to them with the latest figure"),
        "answer": ("what's the {fig} on {doc}?", "tell me the {fig} for {doc}",
                   "I just need to know the {fig} on {doc}", "can you find out the {fig} for {doc}?"),
        "answer_compare": ("what's the {fig} on {doc}, and how much more or less is that than their previous {word}?",
                           "tell me the {fig} for {doc} and how far it is from the {word} they sent before",
                           "I need the {fig} on {doc}, and the difference from their previous {word}",
                           "can you find out the {fig} for {doc} and how it compares with their last {word}?"),
        "answer_ticket": ("what's the {fig} on {doc}, and which of our tickets is tracking it?",
                          "tell me the {fig} for {doc} and the ticket we're handling it on",
                          "I need the {fig} on {doc} - and which ticket in our queue is it on?",
                          "can you find out the {fig} for {doc}, and the key of the ticket that tracks it?"),
    },
    "zh": {
        "report": ("把{doc}的{fig}整理成一份简短说明，存为 {path}", "在 {path} 里留一份{doc}{fig}的记录",
                   "{doc}的{fig}核一下，写个小结存到 {path}", "把{doc}的{fig}写进 {path}"),
        "notify": ("把{fig}发邮件告诉{who}", "{who}那边需要这个{fig}，发封邮件给TA", "邮件同步一下{who}，说明{fig}",
                   "记得把{fig}邮件给{who}"),
        "reply": ("在原邮件里回复{party}的{contact}，说明还剩多少没付", "回一下{contact}的邮件，确认剩余应付金额",
                  "给{contact}回个邮件，告诉{party}余款是多少"),
        "ticket": ("在{key}工单上备注{fig}", "把{fig}记到对应的工单里", "工单那边同步更新一下{fig}"),
        "meet": ("{day}约{who}半小时开个{meeting}", "帮我在{day}和{who}定个30分钟的{meeting}，别和TA的日程冲突",
                 "{day}找个{who}有空的时间，安排半小时{meeting}"),
        "code": ("邮件里要写上正确的{word}", "邮件里别忘了标注{word}", "邮件需要带上我们的{word}"),
        "outside": ("也抄送给{party}的{contact}，他们一直在问", "顺便也发给{party}的{contact}"),
        "standing": ("这周如果有人问起，按最新数字回复", "接下来几天有人问到这件事的话，直接回最新的金额"),
        "answer": ("{doc}的{fig}是多少？", "帮我查一下{doc}的{fig}", "告诉我{doc}的{fig}就行"),
        "answer_compare": ("{doc}的{fig}是多少？和他们上一张{word}相比差多少？", "帮我查一下{doc}的{fig}，以及和上一张{word}的差额",
                           "告诉我{doc}的{fig}，再对比一下他们上一张{word}"),
        "answer_ticket": ("{doc}的{fig}是多少？是哪个工单在跟进？", "帮我查一下{doc}的{fig}，以及对应的工单号",
                          "告诉我{doc}的{fig}和跟进它的工单"),
    },
}

BALANCE = {"en": ("outstanding balance", "remaining balance", "balance still owed", "amount left to pay"),
           "zh": ("剩余应付金额", "尚未支付的余额", "余款")}

OPENERS: dict[str, dict[str, tuple[str, ...]]] = {
    "en": {
        "chat": ("", "Quick one: ", "Hey - ", "When you get a sec, ", "Morning! ", "Small favour: ", "Heads up, ",
                 "Can you help with something? ", "Before lunch if possible: "),
        "mail": ("Hi,\n\n", "Hello,\n\n", "Hi there,\n\n", "Good morning,\n\n", "Hi - hope your week's going well.\n\n",
                 "Hello again,\n\n", "", "Morning,\n\n", "Hey,\n\n", "Hi, one for your list.\n\n",
                 "Hi - a request from {me}.\n\n", "Hello from {me},\n\n"),
        "voicemail": ("[Voicemail transcript, {len}] Hi, it's {me}. ", "[Voicemail, {len}] Hey, {me} here. ",
                      "[Transcribed voice message, {len}] Hi, {me} calling. ",
                      "[Voicemail from {me}, {len}] Um, hi. "),
    },
    "zh": {
        "chat": ("", "麻烦一下，", "有空帮个忙：", "早！", "急事：", "你好，"),
        "mail": ("你好，\n\n", "您好，\n\n", "早上好，\n\n"),
        "voicemail": ("[语音留言转文字，{len}] 喂，我是{me}。", "[语音转写 {len}] 你好，{me}这边，", "[{me}的语音留言，{len}] 嗯，"),
    },
}

CLOSINGS = {"en": ("", "", ", thanks!", ", cheers.", " - appreciate it.", ", thanks a lot.", " (let me know when it's done).",
                    ", ta.", " - thank you!"),
            "zh": ("", "", "，谢谢！", "，辛苦了。", "，弄好跟我说一声。")}
SIGNATURES = {"en": ("Thanks, {me}", "Best, {me}", "Cheers, {me}", "Many thanks, {me}", "{me}", "- {me}", "Ta, {me}",
                     "Speak soon, {me}", "Thanks so much, {me}", "{me} ({title})"),
              "zh": ("{me}", "谢谢，{me}", "—— {me}", "{me}（{title}）")}

BACKGROUND = {
    "en": ("We're closing the month on Friday and I'm trying to get ahead of it.",
           "I'm out for most of the afternoon, so I'd rather not chase this myself.",
           "The {party} account has come up twice this week already.",
           "{manager} asked about this in this morning's stand-up.",
           "This has been sitting in my inbox longer than I'd like.",
           "{party} chased us about it on {day}.", "It came up in {manager}'s one-to-one with me.",
           "I promised {manager} an answer on {party} by {day}.", "Audit season, so everything needs to be tidy.",
           "I've got back-to-back calls until {day}.", "{manager} is covering for me later and will ask.",
           "We had a mix-up with {party} last quarter, so I want this one clean.",
           "Things are hectic with the quarter-end.", "Our team meeting is on {day} and this will come up.",
           "", "", ""),
    "zh": ("周五要月结，想提前把这件事处理掉。", "我下午基本都在外面开会。", "{manager}早会上问起过这件事。",
           "这件事已经拖了好几天了。", "{party}{day}又来问了。", "答应了{manager}{day}前给个答复。", "最近季度末，事情比较多。",
           "上个季度和{party}对账出过岔子，这次想弄清楚。", "{day}组会要讲这个。", "", ""),
}

FORWARD_LEADS = {"en": ("", "", "See below.\n\n", "FYI, this came in:\n\n", "Forwarding this one.\n\n",
                        "This landed with me this morning:\n\n", "Can't deal with this today - see thread.\n\n",
                        "One for you, I think.\n\n", "Passing this on - details at the bottom.\n\n",
                        "Could you take this over?\n\n", "Picking this up from my inbox:\n\n",
                        "Not sure who else to send this to.\n\n", "Sending this your way.\n\n",
                        "Another one from the pile:\n\n", "Can you handle this? Thread below.\n\n",
                        "Over to you on this one.\n\n", "Adding you to this thread.\n\n"),
                 "zh": ("", "见下方邮件。\n\n", "转给你看一下：\n\n", "这封今早收到的：\n\n", "下面这个麻烦跟进。\n\n")}
FORWARD = {
    "en": ("---------- Forwarded message ----------\nFrom: {fwd}, {when}\nSubject: {subject}\n\n{note}\n\n{ask}",
           "-----Original Message-----\nFrom: {fwd}  Sent: {when}\nSubject: RE: {subject}\n\n{note}\n\n{ask}",
           "Fwd: {subject}\n\n> {note}\n> -- {fwd}\n\n{ask}",
           "Begin forwarded message:\n\n> From: {fwd}\n> Subject: {subject}\n>\n> {note}\n\n{ask}",
           "{ask}\n\n________________________________\nFrom: {fwd}\nSent: {when}\nSubject: {subject}\n\n{note}",
           "{ask}\n\nOn {when}, {fwd} wrote:\n> {note}",
           "Subject: FW: {subject}\n\n{ask}\n\n--- earlier ---\n{fwd}: {note}"),
    "zh": ("---------- 转发的邮件 ----------\n发件人：{fwd}\n主题：{subject}\n\n{note}\n\n----------\n\n{ask}",
           "-------- 原始邮件 --------\n发件人：{fwd}\n主题：{subject}\n\n{note}\n\n{ask}",
           "转发：{subject}\n> 发件人：{fwd}\n> {note}\n\n{ask}"),
}
FORWARD_NOTES = {
    "en": ("Can someone on your side pick this up? {party} is asking.", "Flagging this one - {party} again.",
           "Passing this along; I think it's yours.", "See below. Not urgent, but it shouldn't slip."),
    "zh": ("{party}那边在催，麻烦跟进一下。", "这个应该归你们处理，转给你。", "请看下面，别耽误了。"),
}
FORWARD_ASKS = {"en": ("Could you take care of this - {goals}", "Over to you: {goals}", "Can you handle it: {goals}",
                       "Would you pick this up? In short, {goals}", "From our side: {goals}", "What I need: {goals}",
                       "{goals}"),
                "zh": ("麻烦处理一下：{goals}", "交给你了：{goals}", "{goals}", "我们这边需要：{goals}")}

DAY_HEADS = {"en": ("", "Morning - ", "Morning, ", "Hi again - ", "Good morning, ", "Hey, ", "New day - ",
                     "Quick one before my first call: ", "Hello again, ", "Back online - ", "Right, "),
             "zh": ("", "早，", "早上好，", "你好，", "新的一天，", "麻烦一下，", "上班了，")}
DAY_ASKS = {
    "en": ("can you check nothing we sent out on {ref} yesterday is out of date?",
           "make sure everything we put out on {ref} is still right.",
           "before the end of today, double-check {ref} and fix anything we sent if it moved.",
           "{manager} wondered whether {party} touched {ref} again - make sure what we put out is current.",
           "first thing, make sure yesterday's work on {ref} still holds.",
           "{party} may have been in touch overnight, so please re-check {ref} against what we've said.",
           "I'd like to be sure our numbers on {ref} still match the paperwork.",
           "have a look at {ref} again and correct anything that's gone stale.",
           "please re-confirm {ref}, I don't want old figures floating around.",
           "can you go over {ref} once more and put right anything we sent that no longer matches?",
           "is {ref} still where we left it? If not, bring our side in line.",
           "just making sure: what we said about {ref} should match the latest version."),
    "zh": ("昨天{ref}相关的东西麻烦再确认一遍，别有过时的", "{ref}的数字昨晚可能有变动，麻烦确认一下昨天发出去的内容是否还准确",
           "今天下班前再核一遍{ref}，有变化的话把之前发的更正一下", "{manager}问{party}那边是不是又改过{ref}，麻烦核实一下我们发出去的数字",
           "{ref}再对一遍，过时的地方都改过来", "帮我确认下{ref}和我们之前说的是否一致", "{ref}看看有没有新版本，有的话我们这边同步更新"),
}
DAY_TAILS = {"en": ("", "", " - thanks.", ", thanks.", " - ping me if anything changed.", " (shouldn't take long).",
                    " - let me know what you find.", ", cheers."),
             "zh": ("。", "，谢谢。", "，有变化告诉我。", "，辛苦。", "。")}

THEN = {"en": ("Then for {doc}: ", "Separately, for {doc}: ", "Same drill for {doc}: ", "And {doc}: ",
               "While you're at it, {doc}: "),
        "zh": ("另外，{doc}：", "还有{doc}：", "{doc}也一样处理："),}
