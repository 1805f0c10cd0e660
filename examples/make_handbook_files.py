"""Regenerate the binary documents of the sample handbook (PDF, DOCX, PPTX, XLSX) and its HTML page.

    python examples/make_handbook_files.py

Needs reportlab, python-docx and openpyxl (test extras) and pptx (installed with MinerU).
The generated files are committed, so users do not need to run this.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).parent / "handbook"

IT_SECURITY = [
    ("h1", "IT Security Policy"),
    ("p", "Version 3.2, effective 1 August 2026. Owner: Information Security Office. This policy applies to "
          "every employee, contractor and intern who uses Lumen Harbor Technologies systems or data."),
    ("h2", "1 Accounts and passwords"),
    ("h3", "1.1 Password rules"),
    ("p", "Passwords must be at least 14 characters long. Use a passphrase of several unrelated words rather "
          "than a short complex password. Never reuse a company password on another service, and never share "
          "it with anyone, including the IT Service Desk, which will never ask for it."),
    ("p", "Store passwords only in the company password manager. Passwords do not expire on a schedule; you "
          "must change a password immediately when you suspect it has been exposed."),
    ("h3", "1.2 Multi-factor authentication"),
    ("p", "Multi-factor authentication (MFA) is mandatory for email, the VPN, the code repositories and every "
          "system that holds customer data. Use the authenticator app or a hardware security key; text message "
          "codes are not accepted. If you lose your phone or key, call the IT Service Desk on extension 4000 "
          "so that the old factor can be revoked within one hour."),
    ("h3", "1.3 Leaving the company"),
    ("p", "Accounts are disabled on the last working day at 18:00. Managers must request access removal for "
          "contractors at least three working days before the contract ends."),
    ("h2", "2 Devices"),
    ("h3", "2.1 Company laptops"),
    ("p", "Company laptops are encrypted, managed centrally and must receive security updates within seven "
          "days of release. Lock your screen whenever you leave your desk; the screen locks automatically after "
          "five minutes of inactivity. Do not install software from outside the company software catalogue "
          "without approval from the IT Service Desk."),
    ("h3", "2.2 Personal devices"),
    ("p", "Personal phones may access email and chat only through the managed work profile. Personal computers "
          "must never be used to access customer data or the code repositories."),
    ("h3", "2.3 Travelling with devices"),
    ("p", "When travelling abroad, take only the devices you need. Keep laptops in your hand luggage, never in "
          "checked baggage. Use the VPN on every network outside the office, including hotel and airport Wi-Fi."),
    ("pagebreak", ""),
    ("h2", "3 Handling data"),
    ("h3", "3.1 Classification"),
    ("p", "Company information is classified as Public, Internal, Confidential or Restricted. Customer data is "
          "always Restricted. Restricted data may only be stored in approved systems and may never be sent by "
          "email to external recipients without encryption."),
    ("h3", "3.2 Sharing files"),
    ("p", "Share files with colleagues through the company drive rather than as attachments. Links to "
          "Confidential or Restricted files must be limited to named people and expire after 30 days. Public "
          "links are allowed only for Public information."),
    ("h3", "3.3 Removable media"),
    ("p", "USB storage devices are blocked on company laptops. If you need to exchange data with a customer on "
          "physical media, request an encrypted device from the IT Service Desk."),
    ("h2", "4 Incidents"),
    ("h3", "4.1 What to report"),
    ("p", "Report immediately any lost or stolen device, any suspicious email you clicked on, any password you "
          "typed into a suspicious page and any data sent to the wrong recipient. Reporting quickly matters more "
          "than being sure: nobody is blamed for a report that turns out to be harmless."),
    ("h3", "4.2 How to report"),
    ("p", "Use the Report Phishing button in your email client for suspicious messages. For everything else, "
          "post in the #security-incident channel or call the security hotline on extension 4444, which is "
          "staffed around the clock. Do not try to investigate on your own and do not delete evidence."),
]

ANNUAL_LEAVE = [
    ("h0", "Annual Leave and Time Off Policy"),
    ("p", "Effective 1 January 2026 for employees outside China. Employees of the China office follow 年假与请假制度."),
    ("h1", "Annual leave entitlement"),
    ("p", "Full-time employees receive 26 working days of paid annual leave per calendar year, in addition to "
          "public holidays. Part-time employees receive the same entitlement in proportion to their contractual "
          "hours. Employees who join or leave during the year receive a pro-rata share for each full month worked."),
    ("h2", "Long service days"),
    ("p", "After five years of continuous service, employees receive two extra days of annual leave per year; "
          "after ten years, four extra days."),
    ("h1", "Booking leave"),
    ("p", "Book leave in the HR portal at least two weeks in advance for absences of more than three days, and "
          "at least two working days in advance for shorter absences. Your manager answers within three working "
          "days. During the December closure (24 to 31 December) three days of annual leave are used automatically."),
    ("h1", "Carrying over unused leave"),
    ("p", "Up to five unused days can be carried over into the next year and must be taken before 31 March. "
          "Days above five are forfeited unless your manager asked you in writing to postpone planned leave for "
          "business reasons, in which case all postponed days are carried over."),
    ("h1", "Sick leave"),
    ("p", "If you are ill, tell your manager before 10:00 on the first day of absence. A medical certificate is "
          "needed from the fourth consecutive day of sickness. Sick days during booked annual leave are credited "
          "back when you provide a medical certificate."),
    ("h1", "Parental leave"),
    ("p", "Birth mothers receive 20 weeks of fully paid maternity leave. Other parents receive 8 weeks of fully "
          "paid parental leave, which can be taken in up to four blocks within the child's first year."),
]

OFFICE_GUIDE_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Office and Facilities Guide</title></head>
<body>
<h1>Office and Facilities Guide</h1>
<p>Practical information for the Lisbon and Shanghai offices of Lumen Harbor Technologies.</p>
<h2>Opening hours and access</h2>
<p>The offices are open from 7:00 to 21:00 on working days. Your badge opens the entrance and your floor;
outside opening hours, badge access must be requested from Facilities at least one day in advance.</p>
<h2>Desks and meeting rooms</h2>
<p>Desks are shared. Book a desk in the workplace app by 18:00 on the previous day. Meeting rooms for up to
six people can be booked for at most two hours; larger rooms require approval from Facilities.</p>
<h2>Visitors</h2>
<p>Register visitors in the workplace app before they arrive. Visitors receive a temporary badge at
reception and must be accompanied at all times.</p>
<h2>Parking and bicycles</h2>
<p>Car parking spaces are limited and assigned by lottery every quarter. Bicycle parking and showers are
available on the ground floor without booking.</p>
<h2>Lost and found</h2>
<p>Items found in the office are kept at reception for 30 days and then donated.</p>
</body></html>
"""

HOLIDAYS = [
    ("Date", "Holiday", "Office", "Notes"),
    ("2026-01-01", "New Year's Day", "All offices", "Closed"),
    ("2026-02-17", "Spring Festival", "Shanghai", "Closed 17-23 February"),
    ("2026-04-03", "Good Friday", "Lisbon", "Closed"),
    ("2026-04-05", "Qingming Festival", "Shanghai", "Closed"),
    ("2026-04-25", "Freedom Day", "Lisbon", "Closed"),
    ("2026-05-01", "Labour Day", "All offices", "Closed; Shanghai closed 1-5 May"),
    ("2026-06-10", "Portugal Day", "Lisbon", "Closed"),
    ("2026-06-19", "Dragon Boat Festival", "Shanghai", "Closed"),
    ("2026-10-01", "National Day", "Shanghai", "Closed 1-7 October"),
    ("2026-12-24", "December closure", "All offices", "24-31 December; 3 days of annual leave are used"),
    ("2026-12-25", "Christmas Day", "Lisbon", "Closed"),
]

BENEFITS_SLIDES = [
    ("Employee Benefits 2026", ["Overview for all employees", "People Team, January 2026"]),
    ("Health insurance", ["Private health insurance for employees and their children", "Dental cover up to 750 EUR per year",
                          "Annual health check for employees over 40"]),
    ("Learning budget", ["1,500 EUR per employee per year for courses, books and conferences",
                         "Five paid learning days per year", "Unused budget does not carry over"]),
    ("Wellbeing", ["Gym membership subsidy of 30 EUR per month", "Confidential counselling service, 6 free sessions per year"]),
]


def make_pdf(path: Path) -> None:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate, Spacer

    styles = getSampleStyleSheet()
    style = {"h1": styles["Title"], "h2": styles["Heading1"], "h3": styles["Heading2"], "p": styles["BodyText"]}
    story = []
    for kind, text in IT_SECURITY:
        if kind == "pagebreak":
            story.append(PageBreak())
            continue
        story.append(Paragraph(text, style[kind]))
        story.append(Spacer(1, 6))

    def footer(canvas, doc) -> None:
        canvas.setFont("Helvetica", 8)
        canvas.drawString(72, 30, f"Lumen Harbor Technologies - IT Security Policy - page {doc.page}")

    SimpleDocTemplate(str(path), pagesize=A4, title="IT Security Policy", author="Information Security Office").build(
        story, onFirstPage=footer, onLaterPages=footer
    )


def make_docx(path: Path) -> None:
    import docx

    document = docx.Document()
    document.core_properties.title = "Annual Leave and Time Off Policy"
    for kind, text in ANNUAL_LEAVE:
        if kind.startswith("h"):
            document.add_heading(text, level=int(kind[1]))
        else:
            document.add_paragraph(text)
    document.save(str(path))


def make_xlsx(path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Holidays 2026"
    for row in HOLIDAYS:
        sheet.append(row)
    book.save(str(path))


def make_pptx(path: Path) -> None:
    from pptx import Presentation

    deck = Presentation()
    for i, (title, bullets) in enumerate(BENEFITS_SLIDES):
        slide = deck.slides.add_slide(deck.slide_layouts[0 if i == 0 else 1])
        slide.shapes.title.text = title
        body = slide.placeholders[1].text_frame
        body.text = bullets[0]
        for bullet in bullets[1:]:
            body.add_paragraph().text = bullet
    deck.save(str(path))


if __name__ == "__main__":
    make_pdf(HERE / "it-security-policy.pdf")
    make_docx(HERE / "annual-leave-policy.docx")
    make_xlsx(HERE / "public-holidays-2026.xlsx")
    make_pptx(HERE / "benefits-2026.pptx")
    (HERE / "office-guide.html").write_text(OFFICE_GUIDE_HTML, encoding="utf-8")
    print("wrote", sorted(p.name for p in HERE.iterdir()))
