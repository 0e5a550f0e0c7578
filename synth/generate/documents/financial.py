"""Itemised documents: invoices, purchase orders, quotations, expense reports, fee notes, usage bills,
order receipts, patient statements, repair quotations, itineraries, commission notes, trip costings.

Each kind has its own header fields, table columns and closing sections (payment details, delivery
terms, validity and exclusions, declarations), but all compute their figures here from the facts'
lines, so the line amounts add up to the subtotal, the tax is the stated rate of it, and the total is
their sum (`base.total_of`). Chinese documents follow Chinese office forms (供方/需方, 价税合计大写).
"""

from __future__ import annotations

from typing import Any, Callable

from .base import TAX_NAMES, Ctx, line_amounts, rmb_upper, subtotal, table, tax_of

TITLES = {
    "invoice": ("Invoice", "发票"), "credit_note": ("Credit note", "红字发票"), "statement": ("Statement of account", "对账单"),
    "expense_claim": ("Expense report", "费用报销单"), "fee_note": ("Fee note", "律师费账单"), "quote": ("Quotation", "报价单"),
    "order_form": ("Order form", "订购单"), "order_receipt": ("Order receipt", "订单明细"), "cloud_bill": ("Usage invoice", "云服务账单"),
    "purchase_order": ("Purchase order", "采购订单"), "billing_statement": ("Patient billing statement", "患者费用清单"),
    "repair_quote": ("Repair quotation", "维修报价单"), "itinerary": ("Travel itinerary and costs", "行程及费用单"),
    "commission_note": ("Commission note", "约稿单"), "trip_letter": ("School trip costing", "研学活动费用单"),
    "insurance_claim": ("Insurance claim form", "保险理赔申请表"),
}


EXPENSE_CATEGORIES = (  # (words in the description, English category, Chinese category), the first match wins
    (("flight", "fare", "train", "taxi", "mileage", "relocation", "机票", "火车", "交通", "搬迁"), "Travel", "交通"),
    (("hotel", "housing", "night", "accommodation", "住宿", "酒店"), "Accommodation", "住宿"),
    (("meal", "dinner", "lunch", "catering", "餐", "茶歇"), "Meals", "餐饮"),
    (("course", "training", "conference", "培训", "课程", "会议"), "Training", "培训"),
    (("check", "service", "fee", "调查", "服务"), "Services", "服务费"),
)


def expense_category(description: str, zh: bool) -> str:
    """The category an expense line's description falls in (a claim's category column agrees with its line)."""
    low = description.lower()
    for words, en, cn in EXPENSE_CATEGORIES:
        if any(w in low for w in words):
            return cn if zh else en
    return "办公用品" if zh else "Supplies"


def _header(c: Ctx, fields: list[tuple[str, str]]) -> list[str]:
    return [f"**{k}{c.colon}** {v}  " for k, v in fields if v]


def _rows(c: Ctx, kind: str) -> tuple[list[str], list[list[Any]], tuple[int, ...]]:
    """The item table: columns by kind, one row per line, amounts computed."""
    lines = c.facts["lines"]
    amounts = line_amounts(lines)
    if kind == "expense_claim":
        head = [c.t("Date", "日期"), c.t("Category", "类别"), c.t("Description", "说明"), c.t("Qty", "数量"),
                c.t("Unit", "单价"), c.t("Amount", "金额")]
        rows = [[c.after(-c.rng.randint(3, 25)), expense_category(n, c.zh), n, q, c.money(u), c.money(a)]
                for (n, q, u), a in zip(lines, amounts)]
        return head, rows, (3, 4, 5)
    if kind == "fee_note":
        head = [c.t("Work", "工作内容"), c.t("Fee earner", "承办律师"), c.t("Units", "数量"), c.t("Rate", "费率"),
                c.t("Amount", "金额")]
        earners = [c.person() for _ in range(2)]
        rows = [[n, c.rng.choice(earners), q, c.money(u), c.money(a)] for (n, q, u), a in zip(lines, amounts)]
        return head, rows, (2, 3, 4)
    no = c.t("No.", "序号")
    head = [no, c.t("Description", "品名及规格" if kind in ("purchase_order", "order_form") else "项目"),
            c.t("Qty", "数量"), c.t("Unit price", "单价"), c.t("Amount", "金额")]
    rows = [[i + 1, n, q, c.money(u), c.money(a)] for i, ((n, q, u), a) in enumerate(zip(lines, amounts))]
    return head, rows, (0, 2, 3, 4)


def _fields(c: Ctx, kind: str) -> list[tuple[str, str]]:
    f = c.facts
    ref, date = f["ref"], f["date"]
    issuer, recipient = f["issuer"], f["recipient"]
    if kind == "purchase_order":  # the buyer issues a PO: the facts' issuer is the supplier it is sent to
        return [(c.t("PO number", "订单编号"), ref), (c.t("Order date", "下单日期"), date),
                (c.t("Buyer", "需方"), recipient), (c.t("Supplier", "供方"), issuer),
                (c.t("Deliver to", "交货地点"), c.address()), (c.t("Required by", "交货日期"), c.after(14)),
                (c.t("Buyer contact", "需方联系人"), f"{c.person()}{c.t(', ', '，')}{c.phone()}")]
    if kind == "expense_claim":
        return [(c.t("Claim number", "单据编号"), ref), (c.t("Submitted", "填报日期"), date),
                (c.t("Claimant", "报销人"), c.person()), (c.t("Organisation", "单位"), recipient),
                (c.t("Paid to", "收款单位"), issuer),
                (c.t("Cost centre", "成本中心"), f"CC-{c.rng.randint(100, 899)}"),
                (c.t("Purpose", "事由"), c.pick(("Candidate relocation", "Onboarding week", "Client visit",
                                                 "Training course"), ("新员工入职", "客户拜访", "外出培训", "招聘会")))]
    if kind == "billing_statement":
        return [(c.t("Statement", "单号"), ref), (c.t("Statement date", "开单日期"), date),
                (c.t("Patient", "患者"), issuer), (c.t("Practice", "医疗机构"), recipient),
                (c.t("Patient number", "病历号"), f"{c.rng.randint(100000, 999999)}"),
                (c.t("Insurer", "医保/保险"), c.pick(("Blue Shield PPO", "Aetna Choice", "Self-pay", "Bupa"),
                                                   ("城镇职工医保", "自费", "商业保险")))]
    if kind == "itinerary":
        return [(c.t("Booking reference", "预订编号"), ref), (c.t("Issued", "出单日期"), date),
                (c.t("Agency", "服务商"), issuer), (c.t("Client", "客户"), recipient),
                (c.t("Traveller", "出行人"), c.person())]
    if kind == "commission_note":
        return [(c.t("Commission", "约稿编号"), ref), (c.t("Date", "日期"), date), (c.t("Contributor", "供稿人"), issuer),
                (c.t("Publication", "刊发单位"), recipient),
                (c.t("Filing deadline", "交稿日期"), c.after(10)), (c.t("Rights", "版权"), c.t(
                    "First serial rights, 12 months' exclusivity online", "首发权，网络独家12个月"))]
    label_from, label_to = c.t("From", "开票方"), c.t("To", "收票方")
    if kind == "quote" or kind == "repair_quote":
        label_from, label_to = c.t("Quoted by", "报价方"), c.t("Prepared for", "客户")
    out = [(c.t("Reference", "编号"), ref), (c.t("Date", "日期"), date), (label_from, issuer),
           (c.t("Address", "地址"), c.address()), (label_to, recipient)]
    if kind in ("invoice", "cloud_bill", "order_receipt", "statement", "credit_note"):
        out.append((c.t("Due", "付款期限"), c.after(30)))
    if kind == "cloud_bill":
        out.append((c.t("Billing period", "计费周期"), f"{c.after(-31)} - {c.after(-1)}"))
        out.append((c.t("Account ID", "账号"), f"{c.rng.randint(1000, 9999)}-{c.rng.randint(1000, 9999)}-{c.rng.randint(1000, 9999)}"))
    if kind in ("quote", "repair_quote"):
        out.append((c.t("Valid until", "有效期至"), c.after(30)))
    if kind == "repair_quote":
        out.append((c.t("Site", "施工地点"), c.address()))
    if kind == "trip_letter":
        out.append((c.t("Visit date", "活动日期"), c.after(21)))
    return out


def _closing(c: Ctx, kind: str, total: float) -> list[str]:
    """What follows the totals: payment details, terms, declarations, by kind."""
    if kind in ("invoice", "cloud_bill", "statement", "credit_note", "fee_note", "commission_note"):
        if c.zh:
            return ["", "**付款信息**", "", f"- 开户行：{c.pick(('招商银行', '中国工商银行', '中国建设银行'), ('招商银行', '中国工商银行', '中国建设银行'))}"
                    f"{c.rng.choice(('上海分行', '北京分行', '深圳分行'))}",
                    f"- 账号：{c.rng.randint(10**15, 10**16 - 1)}", "- 付款条件：收到发票后30日内付款。"]
        if c.loc.code == "en-GB":
            bank = f"- Sort code {c.rng.randint(10, 99)}-{c.rng.randint(10, 99)}-{c.rng.randint(10, 99)}, " \
                   f"account {c.rng.randint(10**7, 10**8 - 1)}"
        else:
            bank = f"- ACH routing {c.rng.randint(10**8, 10**9 - 1)}, account {c.rng.randint(10**9, 10**10 - 1)}"
        return ["", "**Payment details**", "", bank, f"- Please quote {c.facts['ref']} with your payment.",
                "- Payment terms: 30 days from the invoice date."]
    if kind == "purchase_order":
        terms = c.t("1. Deliveries must quote the PO number on the delivery note.\n2. Goods are inspected on receipt; "
                    "non-conforming goods are returned at the supplier's cost.\n3. Invoices are paid 45 days after "
                    "receipt of goods and a correct invoice.",
                    "一、送货单须注明本订单编号。\n二、需方收货后进行验收，不合格产品由供方负责退换并承担费用。\n"
                    "三、需方在收到货物及合规发票后45日内付款。")
        return ["", c.t("**Terms**", "**订单条款**"), "", terms, "", c.t(f"Authorised by: {c.person()}",
                                                                       f"需方（盖章）：{c.facts['recipient']}　经办人：{c.person()}")]
    if kind in ("quote", "repair_quote", "order_form"):
        items = c.t("1. Prices exclude anything not listed above.\n2. Work is scheduled on receipt of a signed "
                    "acceptance.\n3. Any change to scope is quoted separately before it is carried out.",
                    "一、以上报价不含未列明的项目。\n二、收到签字确认后安排实施。\n三、如范围变更，另行报价确认后执行。")
        return ["", c.t("**Assumptions and exclusions**", "**报价说明**"), "", items, "",
                c.t("Accepted for and on behalf of the client: ____________  Date: ________",
                    "客户确认（签字/盖章）：____________　日期：________")]
    if kind == "expense_claim":
        return ["", c.t("I confirm these expenses were incurred on company business and receipts are attached.",
                        "本人承诺以上费用均因公发生，票据真实，附件齐全。"), "",
                c.t(f"Approved by: {c.person()} (line manager)", f"部门负责人审批：{c.person()}　财务审核：{c.person()}")]
    if kind == "billing_statement":
        return ["", c.t(f"Amount due from patient: {c.money(total)}. Please pay within 30 days; call "
                        f"{c.phone()} to set up a payment plan.",
                        f"患者自付金额：{c.money(total)}。如有疑问请致电 {c.phone()}。")]
    if kind == "itinerary":
        return ["", c.t("Fares are non-refundable after ticketing; hotel cancellations are free until 48 hours before "
                        "arrival.", "机票出票后不可退改；酒店入住前48小时可免费取消。")]
    if kind == "trip_letter":
        return ["", c.t("The cost per pupil is the total divided by the pupils attending; families on free school "
                        "meals are not charged.", "费用按实际参加学生人数分摊，家庭经济困难学生费用全免。")]
    return []


def itemised(c: Ctx) -> tuple[str, str]:
    """An itemised document of `c.kind` stating issuer, recipient, ref, date and the facts' lines."""
    kind = c.kind if c.kind in TITLES else "invoice"
    head = TITLES[kind][1 if c.zh else 0]
    title = f"{head} {c.facts['ref']}"
    cols, rows, right = _rows(c, kind)
    sub = subtotal(c.facts["lines"])
    rate = c.facts.get("tax_rate", 0.0)
    tax = tax_of(sub, rate)
    text = [f"# {title}", "", *_header(c, _fields(c, kind)), "", *table(cols, rows, right), "",
            f"{c.t('Subtotal', '小计')}{c.colon} {c.money(sub)}  "]
    if tax:
        text.append(f"{TAX_NAMES.get(c.loc.code, 'Tax')} ({rate * 100:.0f}%){c.colon} {c.money(tax)}  ")
    text.append(f"**{c.t('Total', '合计')}{c.colon} {c.money(sub + tax)}**")
    if c.zh:
        text.append(f"（大写）人民币{rmb_upper(sub + tax)}")
    text += _closing(c, kind, sub + tax)
    if c.facts.get("note"):
        text += ["", f"{c.t('Notes', '备注')}{c.colon} {c.facts['note']}"]
    return title, "\n".join(text) + "\n"


WRITERS: dict[str, Callable[[Ctx], tuple[str, str]]] = {k: itemised for k in TITLES}
