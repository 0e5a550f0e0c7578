"""Agreements and letters: a services contract with numbered clauses, a residential lease, an offer
letter, a payslip, a patient appointment letter. Figures that appear more than once agree (the lease's
deposit is a stated number of months' rent; the payslip's net pay is gross pay less its deductions).
Chinese ones follow Chinese forms: 甲方/乙方, 第一条..., 一式两份; 应发/实发工资 with 五险一金.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta

from .base import Ctx, cents, rmb_upper, table

CN_NUM = "零一二三四五六七八九十"


def _cn(n: int) -> str:
    return CN_NUM[n] if n <= 10 else f"十{CN_NUM[n - 10]}" if n < 20 else f"{CN_NUM[n // 10]}十{CN_NUM[n % 10] if n % 10 else ''}"


def _law(c: Ctx) -> str:
    return {"en-GB": "the laws of England and Wales", "en-US": f"the laws of the State of "
            f"{c.rng.choice(('Illinois', 'New York', 'Delaware', 'California'))}"}.get(c.loc.code, "中华人民共和国法律")


def _clauses(c: Ctx, clauses: list[tuple[str, list[str]]]) -> list[str]:
    out = []
    for i, (head, parts) in enumerate(clauses, 1):
        if c.zh:
            out += [f"**第{_cn(i)}条 {head}**", ""] + [f"{j}. {p}" for j, p in enumerate(parts, 1)] + [""]
        else:
            out += [f"**{i}. {head}**", ""] + [f"{i}.{j} {p}" for j, p in enumerate(parts, 1)] + [""]
    return out


def contract(c: Ctx) -> tuple[str, str]:
    """A services agreement between the organisation and the party, with numbered clauses."""
    f = c.facts
    fee = f.get("amount") or cents(c.rng.uniform(8, 90) * 1000)
    months = c.rng.choice((6, 12, 24))
    notice = c.rng.choice((30, 60, 90))
    if c.zh:
        title = f"服务合同（合同编号：{f['ref']}）"
        clauses = [("服务内容", [f"乙方按本合同附件一所列范围为甲方提供服务。", "服务期间乙方应指定专人对接，人员变更须提前书面通知甲方。"]),
                   ("合同期限", [f"本合同自{f['date']}起生效，有效期{months}个月。", f"任何一方提前{notice}日书面通知可解除本合同。"]),
                   ("费用及支付", [f"合同总金额为人民币{fee:,.2f}元（大写：{rmb_upper(fee)}），含税。",
                               "甲方在收到乙方开具的合规增值税发票后30日内付款。"]),
                   ("保密条款", ["双方对在履行本合同过程中知悉的对方商业秘密负有保密义务，合同终止后仍然有效。"]),
                   ("违约责任", ["任何一方违反本合同约定，应赔偿由此给对方造成的直接损失。"]),
                   ("争议解决", [f"本合同适用{_law(c)}。因本合同引起的争议，双方协商解决；协商不成的，提交甲方所在地人民法院诉讼解决。"])]
        head = [f"# {title}", "", f"甲方：{f['recipient']}", f"乙方：{f['issuer']}", f"签订日期：{f['date']}", "",
                "甲乙双方经友好协商，就乙方向甲方提供服务事宜达成如下协议：", ""]
        tail = ["本合同一式两份，甲乙双方各执一份，具有同等法律效力。", "",
                f"甲方（盖章）：{f['recipient']}　　乙方（盖章）：{f['issuer']}", f"授权代表：{c.person()}　　授权代表：{c.person()}"]
        return title, "\n".join(head + _clauses(c, clauses) + tail) + "\n"
    title = f"Services Agreement {f['ref']}"
    clauses = [("Definitions", ["\"Services\" means the services described in Schedule 1.",
                                "\"Effective Date\" means the date this Agreement is signed by both parties."]),
               ("Services", [f"{f['issuer']} (the \"Supplier\") shall provide the Services with reasonable skill and care.",
                             "The Supplier shall name a single point of contact and give written notice of any change."]),
               ("Fees and payment", [f"The Client shall pay the Supplier {c.money(fee)} in total for the Services, "
                                     "invoiced monthly in arrears.",
                                     "Invoices are payable within 30 days of receipt; disputed amounts must be raised "
                                     "within 10 working days."]),
               ("Term and termination", [f"This Agreement runs for {months} months from the Effective Date.",
                                         f"Either party may terminate it on {notice} days' written notice."]),
               ("Confidentiality", ["Each party shall keep the other's confidential information confidential and "
                                    "use it only to perform this Agreement."]),
               ("Limitation of liability", ["Neither party's total liability shall exceed the fees paid in the 12 "
                                            "months before the claim."]),
               ("Governing law", [f"This Agreement is governed by {_law(c)}."])]
    head = [f"# {title}", "", f"**This Agreement** is made on {f['date']} between:", "",
            f"1. {f['recipient']} (the \"Client\"); and", f"2. {f['issuer']} (the \"Supplier\").", ""]
    tail = ["Signed for the Client: ____________ " + c.person(), "Signed for the Supplier: ____________ " + c.person()]
    return title, "\n".join(head + _clauses(c, clauses) + tail) + "\n"


def lease(c: Ctx) -> tuple[str, str]:
    """A residential tenancy: rent, deposit as months of rent, numbered obligations."""
    f = c.facts
    rent = cents(c.rng.randint(90, 420) * 10 * (7 if c.zh else 1))
    months = c.rng.choice((1, 2)) if c.zh else c.rng.choice((1, 1.5)) if c.loc.code == "en-US" else 1.15
    deposit = cents(rent * months)
    prop = c.address()
    if c.zh:
        title = f"房屋租赁合同 {f['ref']}"
        clauses = [("房屋基本情况", [f"出租房屋坐落于{prop}，建筑面积{c.rng.randint(45, 140)}平方米。"]),
                   ("租赁期限", [f"租赁期自{f['date']}起共{c.rng.choice((12, 24))}个月。"]),
                   ("租金及押金", [f"月租金为{c.money(rent)}，按月支付，每月5日前付清。",
                              f"押金为{months}个月租金，即{c.money(deposit)}，租期届满无违约的予以退还。"]),
                   ("维修责任", ["房屋及附属设施的自然损坏由出租方负责维修；因承租方使用不当造成的损坏由承租方负责。"]),
                   ("其他", ["本合同一式两份，双方各执一份。"])]
        text = [f"# {title}", "", f"出租方（甲方）：{f['recipient']}", f"承租方（乙方）：{c.person()}", ""] + _clauses(c, clauses)
        return title, "\n".join(text) + "\n"
    word = "Tenancy Agreement" if c.loc.code == "en-GB" else "Residential Lease"
    title = f"{word} {f['ref']}"
    clauses = [("The property", [f"The Landlord lets {prop} (the \"Property\") to the Tenant."]),
               ("Term", [f"The term is {c.rng.choice((12, 24))} months starting on {f['date']}."]),
               ("Rent and deposit", [f"The rent is {c.money(rent)} per month, payable in advance on the 1st.",
                                     f"The deposit is {months:g} months' rent, {c.money(deposit)}, held in a "
                                     + ("government-approved deposit scheme." if c.loc.code == "en-GB" else
                                        "separate escrow account.")]),
               ("Repairs", ["The Landlord keeps the structure, exterior and installations in repair.",
                            "The Tenant reports any defect promptly and gives access for repairs on 24 hours' notice."]),
               ("Ending the tenancy", ["Either party may end the tenancy at the end of the term on two months' notice."])]
    text = [f"# {title}", "", f"**Landlord:** {f['recipient']} (managing agent)  ", f"**Tenant:** {c.person()}  ",
            f"**Date:** {f['date']}", ""] + _clauses(c, clauses)
    return title, "\n".join(text) + "\n"


def offer_letter(c: Ctx) -> tuple[str, str]:
    """An offer of employment: role, salary, start date, probation, conditions."""
    f = c.facts
    who = c.person()
    role = c.pick(("Data Analyst", "Operations Coordinator", "Software Engineer", "Account Manager"),
                  ("数据分析师", "运营专员", "软件工程师", "客户经理"))
    salary = cents(c.rng.randint(48, 140) * 1000 if not c.zh else c.rng.randint(12, 45) * 1000)
    if c.zh:
        title = f"录用通知书 {f['ref']}"
        text = [f"# {title}", "", f"{who}：", "", f"您好！很高兴通知您，经过面试评估，{f['recipient']}决定录用您担任{role}一职。", "",
                f"一、入职日期：{c.after(21)}", f"二、税前月薪：{c.money(salary)}，按月发放，年终奖依公司制度执行。",
                f"三、试用期：{c.rng.choice((3, 6))}个月，试用期工资为正式工资的80%。", "四、公司依法为您缴纳五险一金。",
                "五、入职时请携带身份证、学历学位证书原件及离职证明。", "", f"请于{c.after(7)}前回复确认。", "",
                f"{f['recipient']} 人力资源部", f['date']]
        return title, "\n".join(text) + "\n"
    title = f"Offer of employment {f['ref']}"
    per = "per annum" if c.loc.code == "en-GB" else "per year"
    text = [f"# {title}", "", f['date'], "", f"Dear {who.split()[0]},", "",
            f"We are delighted to offer you the position of {role} at {f['recipient']}, on the terms below.", "",
            *table(("Term", "Detail"), [("Start date", c.after(28)), ("Salary", f"{c.money(salary)} {per}, paid monthly"),
                                        ("Probation", f"{c.rng.choice((3, 6))} months"),
                                        ("Holiday", "25 days plus public holidays" if c.loc.code == "en-GB" else
                                         "20 days PTO plus federal holidays"),
                                        ("Notice", "one month after probation")]), "",
            "This offer is conditional on satisfactory references and proof of your right to work.", "",
            f"Please confirm your acceptance by {c.after(7)}.", "", "Yours sincerely,", c.person(), "People Team"]
    return title, "\n".join(text) + "\n"


def payslip(c: Ctx) -> tuple[str, str]:
    """A payslip: earnings and deductions by country; net pay is gross pay less the deductions."""
    f = c.facts
    base = cents(c.rng.randint(800, 3000) * 10 if c.zh else c.rng.randint(250, 900) * 10)
    extra = cents(c.rng.randint(0, 12) * 25)
    earnings = [(c.t("Basic pay", "基本工资"), base), (c.t("Overtime", "加班费"), extra)]
    gross = cents(sum(a for _, a in earnings))
    rates = {"en-US": (("Federal income tax", 0.12), ("State income tax", 0.045), ("Social Security", 0.062),
                       ("Medicare", 0.0145)),
             "en-GB": (("Income tax (PAYE)", 0.16), ("National Insurance", 0.08), ("Pension (5%)", 0.05)),
             "zh-CN": (("养老保险（8%）", 0.08), ("医疗保险（2%）", 0.02), ("失业保险（0.5%）", 0.005),
                       ("住房公积金（7%）", 0.07), ("个人所得税", 0.03))}[c.loc.code]
    deductions = [(n, cents(gross * r)) for n, r in rates]
    total_ded = cents(sum(a for _, a in deductions))
    net = cents(gross - total_ded)
    who = f.get("employee") or c.person()
    title = c.t(f"Payslip {f['ref']}", f"工资条 {f['ref']}")
    rows = [(n, c.money(a), "") for n, a in earnings] + [(n, "", c.money(a)) for n, a in deductions]
    text = [f"# {title}", "", f"**{c.t('Employer', '单位')}{c.colon}** {f['recipient']}  ", f"**{c.t('Employee', '姓名')}{c.colon}** {who}  ",
            f"**{c.t('Pay date', '发放日期')}{c.colon}** {f['date']}", "",
            *table((c.t("Item", "项目"), c.t("Earnings", "应发"), c.t("Deductions", "扣款")), rows, (1, 2)), "",
            f"{c.t('Gross pay', '应发工资')}{c.colon} {c.money(gross)}  ", f"{c.t('Total deductions', '扣款合计')}{c.colon} {c.money(total_ded)}  ",
            f"**{c.t('Net pay', '实发工资')}{c.colon} {c.money(net)}**"]
    c.facts.setdefault("_figures", {}).update({"gross": gross, "deductions": total_ded, "net": net})
    return title, "\n".join(text) + "\n"


def appointment_letter(c: Ctx) -> tuple[str, str]:
    """A letter to a patient: the appointment (a working day, in opening hours), where, what to bring."""
    f = c.facts
    d = c.issued() + timedelta(days=c.rng.randint(5, 20))
    while d.weekday() >= 5:
        d += timedelta(days=1)
    lunch = c.loc.lunch or (0, 0)
    hours = [h for h in range(c.loc.work_start, c.loc.work_end - 1) if not lunch[0] <= h < lunch[1]]
    at = datetime.combine(d, time(c.rng.choice(hours), c.rng.choice((0, 15, 30, 45))))
    clinician = c.person()
    patient = f["issuer"]
    if c.zh:
        title = f"预约通知 {f['ref']}"
        text = [f"# {title}", "", f"{patient}：", "", f"您好！您在{f['recipient']}的复诊已预约如下：", "",
                f"- 就诊时间：{c.day(d)} {at:%H:%M}", f"- 接诊医生：{clinician}医生", f"- 地点：{c.address()}", "",
                "请提前15分钟到达，并携带身份证、医保卡及既往检查报告。如需改期，请至少提前24小时致电 " + c.phone() + "。", "",
                f"{f['recipient']} 患者服务部", f['date']]
        return title, "\n".join(text) + "\n"
    title = f"Appointment confirmation {f['ref']}"
    text = [f"# {title}", "", f['date'], "", f"Dear {patient},", "",
            f"Your appointment at {f['recipient']} is booked as follows:", "",
            *table(("", ""), [("Date", c.day(d)), ("Time", at.strftime("%I:%M %p").lstrip("0") if c.loc.code == "en-US"
                                                       else at.strftime("%H:%M")),
                              ("With", f"Dr {clinician.split()[-1]}"), ("Where", c.address())]), "",
            "Please arrive 10 minutes early and bring a list of your current medicines and your insurance card.",
            f"If you need to cancel or rebook, call {c.phone()} at least 24 hours before; missed appointments may be "
            "charged.", "", "Kind regards,", "Patient Services"]
    return title, "\n".join(text) + "\n"


WRITERS = {"contract": contract, "lease": lease, "offer_letter": offer_letter, "payslip": payslip,
           "appointment_letter": appointment_letter}
