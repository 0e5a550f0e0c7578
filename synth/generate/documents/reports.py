"""Reports and working papers: a lab report, an incident postmortem, meeting minutes, a press release or
article draft, a course syllabus, a property listing, a media plan, a delivery note.

Every figure that is derived is computed here from the rows it summarises: a lab report's means from its
replicates, a syllabus's assessment weights sum to 100%, a listing's floor area is the sum of its rooms,
a media plan's total is the sum of its channels, a delivery note's outstanding quantity is ordered less
delivered, a postmortem's duration is its timeline's end less its start.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta

from .base import Ctx, cents, table


def lab_report(c: Ctx) -> tuple[str, str]:
    """Assay results: samples with replicate readings, their means, a QC line and a conclusion."""
    f = c.facts
    assay = c.pick(("qPCR expression (fold change)", "Protein concentration (mg/mL)", "Cell viability (%)"),
                   ("qPCR相对表达量", "蛋白浓度（mg/mL）", "细胞存活率（%）"))
    rows, means = [], {}
    for i in range(c.rng.randint(3, 5)):
        sid = f"S{c.rng.randint(100, 899)}-{i + 1}"
        reps = [round(c.rng.uniform(0.5, 9.5), 2) for _ in range(3)]
        mean = round(sum(reps) / 3, 2)
        means[sid] = mean
        rows.append((sid, *(f"{r:.2f}" for r in reps), f"{mean:.2f}"))
    best = max(means, key=means.get)  # type: ignore[arg-type]
    c.facts.setdefault("_figures", {}).update({"means": means})
    analyst = c.person()
    if c.zh:
        title = f"检测报告 {f['ref']}"
        text = [f"# {title}", "", f"**委托单位：** {f['recipient']}  ", f"**检测项目：** {assay}  ", f"**报告日期：** {f['date']}  ",
                f"**检测人：** {analyst}", "", "## 一、检测结果", "",
                *table(("样品编号", "重复1", "重复2", "重复3", "平均值"), rows, (1, 2, 3, 4)), "", "## 二、质控",
                "", "阴性对照未检出，阳性对照在允许范围内，本批次结果有效。", "", "## 三、结论", "",
                f"样品 {best} 平均值最高（{means[best]:.2f}）。以上结果仅对来样负责。"]
        return title, "\n".join(text) + "\n"
    title = f"Lab report {f['ref']}"
    text = [f"# {title}", "", f"**Requested by:** {f['recipient']}  ", f"**Assay:** {assay}  ", f"**Date:** {f['date']}  ",
            f"**Analyst:** {analyst}", "", "## Results", "",
            *table(("Sample", "Rep 1", "Rep 2", "Rep 3", "Mean"), rows, (1, 2, 3, 4)), "", "## Quality control", "",
            "Negative control below detection; positive control within limits. The run is accepted.", "",
            "## Conclusion", "", f"Sample {best} has the highest mean ({means[best]:.2f}). Results relate only to the "
            "samples tested."]
    return title, "\n".join(text) + "\n"


def postmortem(c: Ctx) -> tuple[str, str]:
    """An incident postmortem: summary, impact, a timeline whose span is the stated duration, actions."""
    f = c.facts
    start = datetime.combine(c.issued(), time(c.rng.randint(0, 20), c.rng.choice((2, 14, 37, 51))))
    marks = sorted(c.rng.sample(range(3, 170), 3))
    end = start + timedelta(minutes=marks[-1])
    system = c.pick(("checkout API", "payments queue", "search cluster", "login service"),
                    ("下单接口", "支付队列", "搜索集群", "登录服务"))
    c.facts.setdefault("_figures", {}).update({"duration_minutes": marks[-1]})
    ev = c.t("Alert fired;Incident declared, on-call paged;Mitigation deployed;Service recovered",
             "告警触发;宣布故障，通知值班;发布止损措施;服务恢复").split(";")
    steps = [(start.strftime("%H:%M"), ev[0])] + [((start + timedelta(minutes=m)).strftime("%H:%M"), e)
                                                   for m, e in zip(marks, ev[1:])]
    owners = [c.person() for _ in range(2)]
    if c.zh:
        title = f"故障复盘报告 {f['ref']}"
        text = [f"# {title}", "", f"**日期：** {c.day(start.date())}  ", f"**影响系统：** {system}  ",
                f"**持续时间：** {marks[-1]}分钟  ", f"**级别：** P{c.rng.randint(1, 3)}", "", "## 一、概述", "",
                f"{system}在{start:%H:%M}至{end:%H:%M}期间出现大量超时，部分用户请求失败。", "", "## 二、时间线", "",
                *table(("时间", "事件"), steps), "", "## 三、根因", "",
                "配置变更未经灰度直接全量发布，连接池上限被误调低。", "", "## 四、改进项", "",
                *table(("改进项", "负责人", "完成时间"), [("配置变更必须经过灰度", owners[0], c.after(7)),
                                                     ("连接池告警阈值下调", owners[1], c.after(14))])]
        return title, "\n".join(text) + "\n"
    title = f"Incident postmortem {f['ref']}"
    text = [f"# {title}", "", f"**Date:** {c.day(start.date())}  ", f"**System:** {system}  ",
            f"**Duration:** {marks[-1]} minutes  ", f"**Severity:** SEV{c.rng.randint(1, 3)}", "", "## Summary", "",
            f"Between {start:%H:%M} and {end:%H:%M} UTC the {system} timed out for a share of requests.", "",
            "## Timeline", "", *table(("Time (UTC)", "Event"), steps), "", "## Root cause", "",
            "A configuration change lowered the connection pool limit and was rolled out to all hosts at once.", "",
            "## Action items", "", *table(("Action", "Owner", "Due"), [("Stage config changes behind a canary", owners[0],
                                                                      c.after(7)),
                                                                     ("Alert on pool saturation", owners[1], c.after(14))]),
            "", "This review is blameless: it is about the system, not the people."]
    return title, "\n".join(text) + "\n"


def minutes(c: Ctx) -> tuple[str, str]:
    """Meeting minutes: when and who, agenda items with discussion, decisions and actions with owners."""
    f = c.facts
    people = [c.person() for _ in range(c.rng.randint(3, 5))]
    topic = f.get("topic") or c.t("monthly review", "月度例会")
    items = f.get("agenda") or c.t("Open items from last month;Supplier performance;Budget position;AOB",
                                   "上月遗留事项;供应商情况;预算执行;其他事项").split(";")
    lunch = c.loc.lunch or (0, 0)
    hours = [h for h in range(c.loc.work_start, c.loc.work_end - 1) if not lunch[0] <= h < lunch[1]]
    when = datetime.combine(c.issued(), time(c.rng.choice(hours), 0))
    while when.weekday() >= 5:
        when -= timedelta(days=1)
    actions = [(c.t(f"Follow up on {it.lower()}", f"跟进{it}"), c.rng.choice(people), c.after(c.rng.randint(3, 14)))
               for it in items[:2]]
    if c.zh:
        title = f"{topic}会议纪要"
        text = [f"# {title}", "", f"**时间：** {c.day(when.date())} {when:%H:%M}  ", f"**地点：** {c.rng.choice(('3楼会议室', '线上会议', '大会议室'))}  ",
                f"**主持人：** {people[0]}  ", f"**参会人员：** {'、'.join(people)}  ", f"**记录人：** {people[-1]}", ""]
        for i, it in enumerate(items, 1):
            text += [f"## {'一二三四五六'[i - 1]}、{it}", "", c.rng.choice(("与会人员逐项核对，无异议。", "讨论后达成一致意见。",
                                                                      "需会后补充材料再议。")), ""]
        text += ["## 会议决定及待办", "", *table(("事项", "负责人", "完成时间"), actions)]
        return title, "\n".join(text) + "\n"
    title = f"Minutes: {topic}"
    text = [f"# {title}", "", f"**Date:** {c.day(when.date())}, {when:%H:%M}  ", f"**Present:** {', '.join(people)}  ",
            f"**Chair:** {people[0]}  ", f"**Minutes:** {people[-1]}", ""]
    for i, it in enumerate(items, 1):
        text += [f"## {i}. {it}", "", c.rng.choice(("Reviewed; no objections raised.", "Discussed; agreed as proposed.",
                                                     "Deferred to next meeting pending figures.")), ""]
    text += ["## Actions", "", *table(("Action", "Owner", "Due"), actions)]
    return title, "\n".join(text) + "\n"


def press_release(c: Ctx) -> tuple[str, str]:
    """A press release (headline, dateline, lead, a quote, boilerplate, media contact) or, for kind
    `article`, an article draft (headline, standfirst, byline, body, sources, word count)."""
    f = c.facts
    org = f["recipient"]
    spokes = c.person()
    city = c.rng.choice(c.loc.cities)[0]
    news = c.rng.choice(((("opens a new customer centre", "will open a new customer centre"), ("启用新客户服务中心", "新客户服务中心正式启用")),
                         (("reports a record quarter", "has reported its strongest quarter to date"), ("发布季度业绩", "季度营收创历史新高")),
                         (("expands to a second city", "will open a second office next spring"), ("拓展第二座城市", "明年春季将开设第二个办公室")),
                         (("appoints a new director", "has appointed a new director"), ("任命新任总监", "完成新任总监任命"))))
    head_en, body_en = news[0]
    head_zh, body_zh = news[1]
    if c.kind == "article":
        return _article(c, org, city, head_en, body_en, head_zh, body_zh)
    if c.zh:
        title = f"{org}{head_zh}"
        text = [f"# {title}", "", f"【{city}，{f['date']}】{org}今日宣布，{body_zh}。", "",
                f"“{c.rng.choice(('这是团队一年努力的结果。', '我们会继续把客户放在第一位。'))}”{org}负责人{spokes}表示。", "",
                f"## 关于{org}", "", f"{org}成立于{c.rng.randint(1995, 2018)}年，总部位于{city}。", "",
                f"媒体联系：{c.person()}，{c.phone()}"]
        return title, "\n".join(text) + "\n"
    title = f"{org} {head_en}"
    text = [f"# {title}", "", "FOR IMMEDIATE RELEASE" if c.rng.random() < 0.5 else "EMBARGOED UNTIL 09:00", "",
            f"**{city.upper()}, {f['date']}** - {org} said today that it {body_en}.", "",
            f"\"{c.rng.choice(('This is the result of a year of hard work by the whole team.', 'Our clients asked for this, and we listened.'))}\" "
            f"said {spokes}.", "", "## About " + org, "",
            f"{org} was founded in {c.rng.randint(1995, 2018)} and is based in {city}.", "",
            f"**Media contact:** {c.person()}, {c.phone()}"]
    return title, "\n".join(text) + "\n"


def _article(c: Ctx, org: str, city: str, head_en: str, body_en: str, head_zh: str, body_zh: str) -> tuple[str, str]:
    f = c.facts
    words = c.rng.randint(6, 18) * 100
    source = c.person()
    if c.zh:
        title = f"{org}{head_zh}"
        text = [f"# {title}（初稿）", "", f"**作者：** {f['issuer']}  ", f"**字数：** 约{words}字  ", f"**交稿日期：** {f['date']}", "",
                "## 导语", "", f"{city}消息，{org}{body_zh}，业内人士认为此举将带动周边行业。", "", "## 正文", "",
                f"据{org}相关负责人介绍，{body_zh}是公司今年的重点工作之一。", "", "## 信源", "",
                f"- {source}，{org}（电话采访）", "- 公司公告", "", "编辑意见：请补充第三方观点后再提交审校。"]
        return title, "\n".join(text) + "\n"
    title = f"{org} {head_en}"
    text = [f"# {title} (draft)", "", f"**By** {f['issuer']}  ", f"**Length:** about {words} words  ",
            f"**Filed:** {f['date']}", "", "## Standfirst", "", f"The {city} firm {body_en}, a move rivals are watching.", "",
            "## Body", "", f"{org} {body_en}, according to people familiar with the plans.", "",
            f"\"We have been building towards this for a while,\" said {source}.", "", "## Sources", "",
            f"- {source}, {org} (phone interview)", "- Company filing", "", "Desk note: needs a second source before subbing."]
    return title, "\n".join(text) + "\n"


def syllabus(c: Ctx) -> tuple[str, str]:
    """A course syllabus: weeks and topics, assessments whose weights sum to 100%, policies."""
    f = c.facts
    course = c.pick(("Year 9 Geography", "GCSE Biology", "AP Statistics"), ("八年级地理", "初三物理", "高一数学"))
    topics = c.t("Maps and scale;Rivers and flooding;Weather and climate;Fieldwork preparation;Fieldwork write-up;Review",
                 "地图与比例尺;河流与洪水;天气与气候;野外考察准备;考察报告撰写;复习").split(";")
    weights = c.rng.choice(((40, 30, 30), (50, 25, 25), (30, 30, 40), (20, 30, 50)))
    parts = c.t("Coursework;Fieldwork report;End-of-term test", "平时作业;考察报告;期末考试").split(";")
    c.facts.setdefault("_figures", {}).update({"weights": list(weights)})
    if c.zh:
        title = f"{course}课程大纲"
        text = [f"# {title}", "", f"**学校：** {f['recipient']}  ", f"**任课教师：** {c.person()}  ", f"**学期开始：** {f['date']}", "",
                "## 教学安排", "", *table(("周次", "内容"), [(f"第{i}周", t) for i, t in enumerate(topics, 1)]), "",
                "## 考核方式", "", *table(("项目", "占比"), [(p, f"{w}%") for p, w in zip(parts, weights)] + [("合计", "100%")]),
                "", "## 课堂要求", "", "按时完成作业；缺课须提前向班主任请假。"]
        return title, "\n".join(text) + "\n"
    title = f"{course} syllabus"
    text = [f"# {title}", "", f"**School:** {f['recipient']}  ", f"**Teacher:** {c.person()}  ", f"**Term starts:** {f['date']}", "",
            "## Scheme of work", "", *table(("Week", "Topic"), [(i, t) for i, t in enumerate(topics, 1)]), "",
            "## Assessment", "", *table(("Component", "Weight"), [(p, f"{w}%") for p, w in zip(parts, weights)] +
                                       [("Total", "100%")]), "",
            "## Expectations", "", "Homework is set weekly and due the following lesson; absences are notified by a parent."]
    return title, "\n".join(text) + "\n"


def listing(c: Ctx) -> tuple[str, str]:
    """A property listing: price, rooms with their areas (summing to the floor area), features."""
    f = c.facts
    names = c.t("Living room;Kitchen;Bedroom 1;Bedroom 2;Bathroom", "客厅;厨房;主卧;次卧;卫生间").split(";")
    rooms = [(n, round(c.rng.uniform(4, 28), 1)) for n in names[:c.rng.randint(3, 5)]]
    area = round(sum(a for _, a in rooms), 1)
    price = cents(c.rng.randint(18, 95) * 10000 * (7 if c.zh else 1))
    c.facts.setdefault("_figures", {}).update({"area": area})
    where = c.address()
    if c.zh:
        title = f"房源信息 {f['ref']}"
        text = [f"# {title}", "", f"**地址：** {where}  ", f"**挂牌价：** {c.money(price)}  ", f"**套内面积：** {area}平方米", "",
                *table(("房间", "面积（平方米）"), rooms, (1,)), "", "## 房源亮点", "", "- 南北通透，采光好", "- 近地铁站，步行8分钟",
                "", f"经纪人：{c.person()}，{c.phone()}（{f['recipient']}）"]
        return title, "\n".join(text) + "\n"
    unit = "sq m" if c.loc.code == "en-GB" else "sq ft"
    k = 1.0 if unit == "sq m" else 10.764
    rooms = [(n, round(a * k, 1)) for n, a in rooms]
    area = round(sum(a for _, a in rooms), 1)
    c.facts["_figures"]["area"] = area
    title = f"Listing {f['ref']}: {where}"
    text = [f"# {title}", "", f"**Asking price:** {c.money(price)}  ", f"**Floor area:** {area} {unit}  ",
            f"**Listed by:** {f['recipient']}", "", *table(("Room", f"Area ({unit})"), rooms, (1,)), "", "## Features", "",
            "- South-facing garden", "- Ten minutes' walk to the station", "", f"Viewings: {c.person()}, {c.phone()}"]
    return title, "\n".join(text) + "\n"


def media_plan(c: Ctx) -> tuple[str, str]:
    """A media plan: channels with flight dates and budgets; the total is their sum."""
    f = c.facts
    chans = c.t("Paid social;Search;Online video;Out of home;Influencers", "社交媒体;搜索广告;网络视频;户外广告;达人合作").split(";")
    rows = [(ch, f"{c.after(7 * i)} - {c.after(7 * i + 13)}", cents(c.rng.randint(2, 40) * 500 * (7 if c.zh else 1)))
            for i, ch in enumerate(c.rng.sample(chans, c.rng.randint(3, 5)))]
    total = cents(sum(r[2] for r in rows))
    c.facts.setdefault("_figures", {}).update({"total": total})
    title = c.t(f"Media plan {f['ref']}", f"媒介投放计划 {f['ref']}")
    text = [f"# {title}", "", f"**{c.t('Client', '客户')}{c.colon}** {f['recipient']}  ", f"**{c.t('Agency', '代理公司')}{c.colon}** {f['issuer']}", "",
            *table((c.t("Channel", "渠道"), c.t("Flight", "投放周期"), c.t("Budget", "预算")),
                   [(a, b, c.money(x)) for a, b, x in rows], (2,)), "", f"**{c.t('Total', '合计')}{c.colon} {c.money(total)}**"]
    return title, "\n".join(text) + "\n"


def delivery_note(c: Ctx) -> tuple[str, str]:
    """A delivery note: items ordered, delivered and outstanding (ordered less delivered)."""
    f = c.facts
    lines = f.get("lines") or [(c.t("Item", "货品"), 5, 0.0)]
    rows = []
    for n, q, _ in lines:
        got = c.rng.randint(max(0, q - 2), q)
        rows.append((n, q, got, q - got))
    title = c.t(f"Delivery note {f['ref']}", f"送货单 {f['ref']}")
    text = [f"# {title}", "", f"**{c.t('Supplier', '供方')}{c.colon}** {f['issuer']}  ", f"**{c.t('Delivered to', '收货单位')}{c.colon}** {f['recipient']}  ",
            f"**{c.t('Date', '日期')}{c.colon}** {f['date']}", "",
            *table((c.t("Item", "货品"), c.t("Ordered", "订货数量"), c.t("Delivered", "实收数量"), c.t("Outstanding", "未交数量")),
                   rows, (1, 2, 3)), "",
            c.t(f"Received by: {c.person()}   Signature: ________", f"收货人签字：{c.person()}　　　送货人：{c.person()}")]
    return title, "\n".join(text) + "\n"


WRITERS = {"lab_report": lab_report, "incident_report": postmortem, "postmortem": postmortem, "minutes": minutes,
           "board_pack": minutes, "press_release": press_release, "article": press_release,
           "campaign_brief": press_release, "style_memo": minutes, "syllabus": syllabus, "fee_schedule": syllabus,
           "listing": listing, "media_plan": media_plan, "delivery_note": delivery_note, "return_form": minutes}
