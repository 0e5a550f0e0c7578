"""Profession packs: the workplaces a world is drawn from, each with its own vocabulary and work.

A pack names its team and the neighbouring departments (where namesakes sit), the user's job
titles (each fits the work the pack's tasks ask for), the colleagues who must be told or consulted,
the outside parties it deals with, the document kinds its evidence comes in, real-sounding line
items with price ranges, the ticket queue it files work in, and what the figure it tracks is called.
Every text is given in English and Chinese ("en" / "zh").
"""

from __future__ import annotations

from dataclasses import dataclass

L = dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class Profession:
    """One kind of workplace: see the module docstring for the fields."""

    id: str
    label: dict[str, str]
    industry: str
    orgs: L
    team: dict[str, str]
    departments: L  # other departments of the organisation
    user_titles: L
    peer_titles: L  # people in the user's team or close to the work: who gets told, who approves
    parties: L  # outside organisations or people the work is about
    party_word: dict[str, str]
    doc_kinds: tuple[str, ...]  # what evidence documents come as (document generators' kinds)
    doc_word: dict[str, str]  # how people call the main document
    items: dict[str, tuple[tuple[str, float, float], ...]]  # line items and their unit price range
    figure: dict[str, str]  # what the tracked total is called
    queue: tuple[str, str, str]  # ticket project key, its name in en and zh
    folder: str  # where the team keeps its documents
    meeting: dict[str, str]  # what a meeting about the work is called
    party_is_person: bool = False  # the parties are private people (customers, patients, freelancers)


def _l(en: str, zh: str) -> L:
    return {"en": tuple(x.strip() for x in en.split(";")), "zh": tuple(x.strip() for x in zh.split(";"))}


def _items(en: str, zh: str, ranges: str) -> dict[str, tuple[tuple[str, float, float], ...]]:
    lo_hi = [tuple(float(v) for v in r.split("-")) for r in ranges.split()]
    en_l, zh_l = [x.strip() for x in en.split(";")], [x.strip() for x in zh.split(";")]
    return {"en": tuple((n, a, b) for n, (a, b) in zip(en_l, lo_hi)),
            "zh": tuple((n, a * 7, b * 7) for n, (a, b) in zip(zh_l, lo_hi))}


PROFESSIONS: tuple[Profession, ...] = (
    Profession(
        "accounting", {"en": "accounting", "zh": "财务会计"}, "professional services",
        _l("Whitlock & Ames LLP; Northgate Accounting Group; Harrow Lane Partners; Cedarline Bookkeeping",
           "立信华诚会计师事务所; 中瑞恒达财务咨询; 华信永道会计师事务所"),
        {"en": "Finance", "zh": "财务部"}, _l("Sales; Operations; People; Legal", "销售部; 运营部; 人力资源部; 法务部"),
        _l("Accounts Payable Specialist; Staff Accountant; Senior Accountant", "应付会计; 总账会计; 高级会计"),
        _l("Financial Controller; AP Clerk; Finance Manager", "财务经理; 出纳; 财务主管"),
        _l("Harlow Office Supplies; Brightwater Facilities; Keystone IT Services; Meridian Catering Co.",
           "上海晨光办公用品有限公司; 北京恒安物业服务有限公司; 深圳联讯信息技术有限公司"),
        {"en": "supplier", "zh": "供应商"}, ("invoice", "credit_note", "statement"), {"en": "invoice", "zh": "发票"},
        _items("A4 copier paper (box of 5 reams); Toner cartridge, black; Monthly cleaning service; "
               "Managed IT support (per seat); Meeting room catering",
               "A4复印纸（5包/箱）; 黑色硒鼓; 月度保洁服务; IT运维服务（按席位）; 会议茶歇",
               "30-55 60-140 400-1200 35-80 120-600"),
        {"en": "amount due", "zh": "应付金额"}, ("AP", "Accounts payable", "应付账款"), "/finance/payables",
        {"en": "payables review", "zh": "应付款核对会"}),
    Profession(
        "hr", {"en": "human resources", "zh": "人力资源"}, "technology",
        _l("Larkspur Software; Bellhaven Health Systems; Tidewater Logistics", "杭州云帆科技有限公司; 苏州启明智能科技"),
        {"en": "People", "zh": "人力资源部"}, _l("Engineering; Sales; Finance; Operations", "研发部; 销售部; 财务部; 运营部"),
        _l("HR Business Partner; People Operations Specialist; Payroll Coordinator", "HRBP; 人事专员; 薪酬专员"),
        _l("Head of People; Payroll Lead; Recruiting Manager", "人力资源总监; 薪酬主管; 招聘经理"),
        _l("Summit Relocation Services; ClearPath Background Checks; Evergreen Benefits",
           "安居搬迁服务有限公司; 诚信背调咨询; 长青福利管理"),
        {"en": "provider", "zh": "服务商"}, ("expense_claim", "offer_letter", "invoice"), {"en": "claim", "zh": "报销单"},
        _items("Relocation allowance; Temporary housing (per night); Background check; Onboarding laptop bag; "
               "Training course fee", "搬迁补贴; 临时住宿（每晚）; 背景调查; 入职电脑包; 培训课程费",
               "800-3000 90-220 40-120 25-60 200-900"),
        {"en": "reimbursable total", "zh": "可报销合计"}, ("HR", "People requests", "人事事务"), "/people/claims",
        {"en": "onboarding check-in", "zh": "入职沟通会"}),
    Profession(
        "legal", {"en": "legal", "zh": "法务"}, "legal services",
        _l("Ashcombe Hart LLP; Pemberton Legal; Sterling & Vance", "北京金诚律师事务所; 上海锦天律师事务所"),
        {"en": "Legal", "zh": "法务部"}, _l("Finance; Sales; Compliance; Operations", "财务部; 销售部; 合规部; 运营部"),
        _l("Paralegal; Legal Operations Manager; Associate Counsel", "法务助理; 法务运营经理; 法务专员"),
        _l("General Counsel; Billing Coordinator; Senior Counsel", "法务总监; 账务协调员; 资深法务"),
        _l("Ravenscroft Barristers; Holloway Court Reporting; Lexbridge eDiscovery", "中伦文德律师事务所; 法信诉讼支持服务"),
        {"en": "outside counsel", "zh": "外部律所"}, ("fee_note", "contract", "invoice"), {"en": "fee note", "zh": "律师费账单"},
        _items("Review of master services agreement (hours); Drafting of amendment (hours); Court filing fee; "
               "Deposition transcript; Document hosting (per GB)", "主服务协议审阅（小时）; 补充协议起草（小时）; 立案费; 庭审笔录; 文档托管（每GB）",
               "250-600 250-600 100-450 300-900 8-20"),
        {"en": "fees billed", "zh": "账单金额"}, ("LEG", "Legal matters", "法务事项"), "/legal/matters",
        {"en": "matter review", "zh": "案件复盘会"}),
    Profession(
        "sales", {"en": "sales", "zh": "销售"}, "software",
        _l("Quillfeather Analytics; Portside CRM; Ironbridge Systems", "北京数澜科技有限公司; 上海易企云信息技术"),
        {"en": "Sales", "zh": "销售部"}, _l("Finance; Marketing; Customer Success; Legal", "财务部; 市场部; 客户成功部; 法务部"),
        _l("Account Executive; Sales Operations Analyst; Account Manager", "客户经理; 销售运营专员; 大客户经理"),
        _l("Sales Director; Deal Desk Lead; Regional Sales Manager", "销售总监; 商务审批负责人; 区域销售经理"),
        _l("Fairmont Hotels Group; Lindqvist Manufacturing; Coastal Credit Union; Orchard Retail",
           "华润万家超市; 宁波海天机械; 招商局物流集团"),
        {"en": "client", "zh": "客户"}, ("quote", "order_form", "contract"), {"en": "quote", "zh": "报价单"},
        _items("Analytics platform licence (per seat, annual); Implementation package; Premium support; "
               "Data connector add-on; Training workshop (half day)", "分析平台年度许可（每席位）; 实施服务包; 高级支持; 数据连接器插件; 培训工作坊（半天）",
               "300-900 2000-9000 1500-5000 400-1500 800-2000"),
        {"en": "contract value", "zh": "合同金额"}, ("DEAL", "Deal desk", "商务审批"), "/sales/deals",
        {"en": "deal review", "zh": "商机评审会"}),
    Profession(
        "marketing", {"en": "marketing", "zh": "市场营销"}, "consumer goods",
        _l("Juniper & Rye; Halcyon Outdoor; Bluebell Home", "元气森林; 三顿半咖啡; 花西子"),
        {"en": "Marketing", "zh": "市场部"}, _l("Sales; Finance; Product; Legal", "销售部; 财务部; 产品部; 法务部"),
        _l("Campaign Manager; Marketing Coordinator; Brand Manager", "活动经理; 市场专员; 品牌经理"),
        _l("Head of Marketing; Media Buyer; Marketing Finance Partner", "市场总监; 媒介采买; 市场财务BP"),
        _l("Brightline Media Agency; Pixelhouse Studios; Northwind Print", "蓝色光标传播; 有氧创意工作室; 雅昌印刷"),
        {"en": "agency", "zh": "代理公司"}, ("invoice", "campaign_brief", "media_plan"), {"en": "agency invoice", "zh": "代理商账单"},
        _items("Paid social flight (two weeks); Photo shoot day rate; Influencer fee; Printed brochures (per 1,000); "
               "Landing page build", "社交媒体投放（两周）; 拍摄日费; 达人合作费; 宣传册印刷（每千份）; 落地页制作",
               "2000-9000 1200-3500 500-4000 300-900 1500-4000"),
        {"en": "campaign spend", "zh": "活动花费"}, ("MKT", "Marketing requests", "市场需求"), "/marketing/campaigns",
        {"en": "campaign check-in", "zh": "活动复盘会"}),
    Profession(
        "support", {"en": "customer support", "zh": "客户服务"}, "e-commerce",
        _l("Parcelpoint; Hearthstone Appliances; Verdant Kitchenware", "小熊电器; 京东家电服务中心"),
        {"en": "Support", "zh": "客服部"}, _l("Finance; Logistics; Product; Sales", "财务部; 物流部; 产品部; 销售部"),
        _l("Support Specialist; Customer Care Lead; Escalations Agent", "客服专员; 客服组长; 投诉处理专员"),
        _l("Support Manager; Refunds Approver; Quality Lead", "客服经理; 退款审批人; 质检主管"),
        _l("Margaret Ellison; Tomasz Nowak; Priya Raman; Owen Fletcher", "周晓梅; 李建华; 王丽娟; 赵志刚"),
        {"en": "customer", "zh": "客户"}, ("order_receipt", "return_form", "invoice"), {"en": "order", "zh": "订单"},
        _items("Stand mixer, 5 qt; Cast iron skillet; Espresso machine; Replacement carafe; Express shipping",
               "厨师机 5升; 铸铁煎锅; 意式咖啡机; 替换玻璃壶; 加急运费", "180-420 35-90 250-700 20-45 12-30"),
        {"en": "refund due", "zh": "应退金额"}, ("CS", "Customer cases", "客户工单"), "/support/cases",
        {"en": "escalation review", "zh": "升级工单复盘"}, party_is_person=True),
    Profession(
        "engineering", {"en": "engineering and operations", "zh": "研发运维"}, "software",
        _l("Stackwise; Lumen Grid; Fernhill Data", "北京字节跳动; 杭州涂鸦智能; 深圳优必选"),
        {"en": "Engineering", "zh": "研发部"}, _l("Finance; Product; Support; Security", "财务部; 产品部; 客服部; 安全部"),
        _l("Site Reliability Engineer; Platform Engineer; Engineering Manager", "运维工程师; 平台工程师; 研发经理"),
        _l("Head of Infrastructure; FinOps Analyst; On-call Lead", "基础架构负责人; 云成本分析师; 值班负责人"),
        _l("Nimbus Cloud; Pagerline Monitoring; Vaultic Backup", "阿里云; 腾讯云; 华为云"),
        {"en": "vendor", "zh": "云厂商"}, ("cloud_bill", "incident_report", "invoice"), {"en": "bill", "zh": "账单"},
        _items("Compute instances (reserved); Object storage (TB-month); Managed database cluster; Data egress (TB); "
               "Log retention add-on", "计算实例（预留）; 对象存储（TB·月）; 托管数据库集群; 公网出流量（TB）; 日志留存扩展",
               "900-4000 20-30 800-2500 60-95 150-600"),
        {"en": "monthly cloud cost", "zh": "月度云成本"}, ("OPS", "Operations", "运维"), "/ops/billing",
        {"en": "cost review", "zh": "成本复盘会"}),
    Profession(
        "research", {"en": "research lab", "zh": "科研实验室"}, "biotech",
        _l("Halden Institute of Molecular Biology; Corvid Therapeutics; Ashgrove Research Centre",
           "中科院上海生化所; 西湖大学生命科学实验室"),
        {"en": "Lab Operations", "zh": "实验室运营"}, _l("Finance; Facilities; Research Compliance; IT", "财务处; 后勤处; 科研合规办; 信息中心"),
        _l("Lab Manager; Research Associate; Core Facility Coordinator", "实验室主管; 科研助理; 平台协调员"),
        _l("Principal Investigator; Grants Administrator; Safety Officer", "课题组长; 经费管理员; 安全员"),
        _l("Fisher Scientific; Bio-Rad Laboratories; Eppendorf", "国药集团化学试剂; 生工生物工程; 赛默飞世尔中国"),
        {"en": "supplier", "zh": "供应商"}, ("purchase_order", "lab_report", "invoice"), {"en": "reagent order", "zh": "试剂订单"},
        _items("Taq polymerase (500 units); Nitrile gloves (case); 96-well PCR plates (pack of 50); "
               "Fetal bovine serum (500 mL); Pipette tips, filtered (rack of 960)",
               "Taq聚合酶（500U）; 丁腈手套（箱）; 96孔PCR板（50块/包）; 胎牛血清（500毫升）; 带滤芯吸头（960支）",
               "120-260 40-90 90-180 300-700 60-140"),
        {"en": "order total", "zh": "订单金额"}, ("LAB", "Lab requests", "实验室事务"), "/lab/orders",
        {"en": "lab meeting", "zh": "组会"}),
    Profession(
        "clinic", {"en": "clinic administration", "zh": "诊所行政"}, "health care",
        _l("Riverside Family Practice; Oakmont Dental Group; St Anne's Physiotherapy", "和睦家诊所; 瑞尔齿科; 卓正医疗"),
        {"en": "Patient Services", "zh": "患者服务部"}, _l("Billing; Nursing; Facilities; Pharmacy", "收费处; 护理部; 后勤部; 药房"),
        _l("Practice Administrator; Patient Services Coordinator; Billing Specialist", "诊所行政主管; 患者服务专员; 收费专员"),
        _l("Practice Manager; Clinical Lead; Billing Supervisor", "诊所经理; 临床主管; 收费主管"),
        _l("Evelyn Marsh; Daniel Osei; Harriet Quinn; Victor Alvarez", "刘春燕; 陈国栋; 孙雅琴; 周文涛"),
        {"en": "patient", "zh": "患者"}, ("billing_statement", "appointment_letter", "insurance_claim"),
        {"en": "statement", "zh": "费用清单"},
        _items("Initial consultation; Follow-up visit; X-ray, two views; Physiotherapy session; Blood panel",
               "初诊; 复诊; X光（两个体位）; 理疗; 血常规", "120-250 60-140 90-220 55-110 40-130"),
        {"en": "patient balance", "zh": "自付金额"}, ("PT", "Patient services", "患者服务"), "/admin/billing",
        {"en": "billing huddle", "zh": "收费例会"}, party_is_person=True),
    Profession(
        "real_estate", {"en": "real estate", "zh": "房地产"}, "real estate",
        _l("Hawthorne Property Management; Keller & Doyle Realty; Birchwood Estates", "链家地产; 我爱我家; 世联行"),
        {"en": "Property Management", "zh": "物业管理部"}, _l("Finance; Leasing; Maintenance; Legal", "财务部; 租赁部; 工程部; 法务部"),
        _l("Property Manager; Leasing Coordinator; Lettings Negotiator", "物业经理; 租赁专员; 租赁顾问"),
        _l("Portfolio Manager; Maintenance Supervisor; Accounts Lead", "资产经理; 工程主管; 财务主管"),
        _l("Unit 4B tenants; Greystone Roofing; Fairway Plumbing & Heating", "3号楼住户; 安信防水工程; 顺达水电维修"),
        {"en": "contractor", "zh": "施工方"}, ("repair_quote", "listing", "lease"), {"en": "repair quote", "zh": "维修报价单"},
        _items("Roof membrane repair (sq m); Boiler service; Replacement radiator valve; Call-out fee; Gutter clearance",
               "屋面防水修补（平方米）; 锅炉保养; 暖气阀更换; 上门费; 排水沟清理", "40-90 90-180 30-70 60-120 80-200"),
        {"en": "repair cost", "zh": "维修费用"}, ("PM", "Property maintenance", "物业维修"), "/property/maintenance",
        {"en": "site visit", "zh": "现场查看"}),
    Profession(
        "procurement", {"en": "procurement and logistics", "zh": "采购物流"}, "manufacturing",
        _l("Calder Precision Components; Ridgeway Foods; Ostrava Tooling", "三一重工; 美的集团; 潍柴动力"),
        {"en": "Procurement", "zh": "采购部"}, _l("Finance; Warehouse; Quality; Production", "财务部; 仓储部; 质量部; 生产部"),
        _l("Buyer; Procurement Specialist; Logistics Coordinator", "采购员; 采购专员; 物流协调员"),
        _l("Procurement Manager; Warehouse Lead; Supply Chain Director", "采购经理; 仓库主管; 供应链总监"),
        _l("Danforth Steel; Pacific Rim Packaging; Hollis Fasteners", "宝钢股份; 合兴包装; 晋亿紧固件"),
        {"en": "supplier", "zh": "供应商"}, ("purchase_order", "delivery_note", "invoice"), {"en": "purchase order", "zh": "采购订单"},
        _items("Cold-rolled steel sheet (tonne); Corrugated cartons (per 100); M8 hex bolts (box of 500); "
               "Pallet wrap (roll); Freight, LTL", "冷轧钢板（吨）; 瓦楞纸箱（每百个）; M8六角螺栓（500只/盒）; 缠绕膜（卷）; 零担运费",
               "700-1100 45-90 25-60 15-35 200-900"),
        {"en": "order value", "zh": "订单金额"}, ("PO", "Purchasing", "采购"), "/procurement/orders",
        {"en": "supplier call", "zh": "供应商沟通会"}),
    Profession(
        "executive", {"en": "executive assistance", "zh": "行政助理"}, "investment",
        _l("Marlow Capital Partners; Ellery Ventures; Bancroft Holdings", "高瓴资本; 红杉中国; 中金公司"),
        {"en": "Office of the CEO", "zh": "总裁办"}, _l("Finance; Legal; Investor Relations; Operations", "财务部; 法务部; 投资者关系部; 运营部"),
        _l("Executive Assistant; Chief of Staff; Office Manager", "总裁助理; 幕僚长; 行政经理"),
        _l("Chief Executive Officer; Travel Coordinator; Finance Business Partner", "首席执行官; 差旅专员; 财务BP"),
        _l("Corinthia Travel; Hotel Lumière; Savoy Car Service", "携程商旅; 北京国贸大酒店; 首汽约车"),
        {"en": "travel agency", "zh": "差旅服务商"}, ("itinerary", "invoice", "board_pack"), {"en": "itinerary", "zh": "行程单"},
        _items("Return flight, business class; Hotel, three nights; Airport transfers; Conference registration; "
               "Dinner reservation deposit", "往返商务舱机票; 酒店三晚; 机场接送; 会议注册费; 晚宴订金",
               "1800-5200 600-1500 120-300 400-1400 100-400"),
        {"en": "trip cost", "zh": "差旅费用"}, ("EA", "Executive office", "总裁办事务"), "/office/travel",
        {"en": "trip briefing", "zh": "出行沟通会"}),
    Profession(
        "newsroom", {"en": "newsroom", "zh": "新闻编辑部"}, "media",
        _l("The Halford Courier; Lantern Street Media; Westmarch Review", "澎湃新闻; 界面新闻; 财新传媒"),
        {"en": "Newsroom", "zh": "编辑部"}, _l("Finance; Legal; Audience; Photo Desk", "财务部; 法务部; 用户运营部; 图片部"),
        _l("Managing Editor; Commissioning Editor; Desk Editor", "执行主编; 约稿编辑; 值班编辑"),
        _l("Editor-in-Chief; Freelance Payments Coordinator; Standards Editor", "主编; 稿费专员; 审校编辑"),
        _l("Nadia Qureshi; Ellis Moreno; Ruth Abernathy", "宋晓岚; 郑凯文; 何琳琳"),
        {"en": "freelancer", "zh": "供稿人"}, ("commission_note", "invoice", "style_memo"), {"en": "commission", "zh": "约稿单"},
        _items("Feature, 1,800 words; Photo set (10 images); Interview transcription; Expenses, rail travel; "
               "Follow-up explainer", "特稿（1800字）; 组图（10张）; 采访录音整理; 差旅费（火车）; 追踪解读稿",
               "400-1200 250-700 60-180 40-160 200-500"),
        {"en": "fee owed", "zh": "应付稿费"}, ("DESK", "Desk requests", "编辑部事务"), "/desk/commissions",
        {"en": "planning meeting", "zh": "选题会"}, party_is_person=True),
    Profession(
        "school", {"en": "school administration", "zh": "学校行政"}, "education",
        _l("Kingsmead Academy; Lincoln Park High School; St Columba's Primary", "北京市海淀实验中学; 上海市世外小学"),
        {"en": "School Office", "zh": "教务处"}, _l("Finance; Pastoral Care; Facilities; Admissions", "财务室; 德育处; 总务处; 招生办"),
        _l("School Business Manager; Office Administrator; Trips Coordinator", "教务主任; 行政干事; 研学活动负责人"),
        _l("Headteacher; Bursar; Head of Year 9", "校长; 财务主管; 年级组长"),
        _l("Coastline Coaches; Heritage Museum Education; Brookfield Outdoor Centre", "大巴租赁公司; 自然博物馆教育部; 青少年营地"),
        {"en": "provider", "zh": "合作机构"}, ("trip_letter", "fee_schedule", "invoice"), {"en": "trip invoice", "zh": "研学费用单"},
        _items("Coach hire (49-seat); Museum workshop (per pupil); Packed lunch (per pupil); Outdoor activity session; "
               "Supply teacher cover (day)", "大巴租赁（49座）; 博物馆课程（每生）; 午餐（每生）; 户外拓展课; 代课费（天）",
               "350-900 6-15 4-8 200-500 150-260"),
        {"en": "trip cost", "zh": "活动费用"}, ("SCH", "School office", "教务事务"), "/office/trips",
        {"en": "trip planning meeting", "zh": "研学筹备会"}),
)

BY_ID: dict[str, Profession] = {p.id: p for p in PROFESSIONS}


def profession(pid: str) -> Profession:
    """The pack with this id (ValueError naming the known ones)."""
    try:
        return BY_ID[pid]
    except KeyError:
        raise ValueError(f"unknown profession {pid!r}; known: {', '.join(BY_ID)}") from None
