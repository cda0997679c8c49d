#!/usr/bin/env python3
"""Proposes candidate normative statements from the vendored spec texts.

This helper only proposes: the requirement tables (*.tsv) are reviewed and annotated by
hand. Run it to see every sentence holding an uppercase BCP 14 key word, section by
section, and (with --missing) the ones no row of the table quotes yet.

    python3 extract.py rfc8166            # candidates, as TSV rows with blank annotations
    python3 extract.py rfc8166 --missing  # candidates the table does not hold yet

The section splitter and the text normalisation match conformance/tests/requirements.rs:
page headers and footers dropped, headings such as "4.5.1.  Title" at column 0, a section
running to the next heading, whitespace collapsed, and a hyphen at a line break joined.
"""

import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

SPECS = {
    "rfc8166": ("rfc8166.txt", None),
    "rfc8797": ("rfc8797.txt", None),
    # Only the parts RFC 8166 does not supersede: RDMA_MSGP (3.9, 4.3) and CCP (6).
    "rfc5666": ("rfc5666.txt", ("3.9", "4.3", "6")),
    "v2-01": ("draft-cel-nfsv4-rpcrdma-version-two-01.txt", None),
    "xcharext-02": ("draft-dnoveck-nfsv4-rpcrdma-xcharext-02.txt", None),
    "rtrext-03": ("draft-dnoveck-nfsv4-rpcrdma-rtrext-03.txt", None),
    "rfc8167": ("rfc8167.txt", None),
    # Only the NFS version 4 Upper-Layer Binding (6 and its subsections).
    "rfc8267": ("rfc8267.txt", ("6",)),
}

# Longest first, so that "MUST NOT" wins over "MUST".
KEY_WORDS = [
    "MUST NOT",
    "SHALL NOT",
    "SHOULD NOT",
    "NOT RECOMMENDED",
    "MUST",
    "SHALL",
    "REQUIRED",
    "SHOULD",
    "RECOMMENDED",
    "MAY",
    "OPTIONAL",
]
KW_RE = re.compile(r"\b(" + "|".join(KEY_WORDS) + r")\b")
HEADING_RE = re.compile(r"^((?:\d+(?:\.\d+)*|[A-Z](?:\.\d+)*)\.|Appendix ([A-Z])\.)\s\s+\S")
SKIP_TITLES = ("Requirements Language", "References", "Normative References", "Informative References")


def page_lines(text):
    """The lines of an RFC-style text without page footers, form feeds and running headers;
    a paragraph broken by a page break is joined again."""
    out = []
    drop_header = False
    skip_blank = False
    for line in text.lstrip("\ufeff").split("\n"):
        if "\f" in line:
            line = line.replace("\f", "")
            if not line.strip():
                drop_header = True
                continue
            drop_header = False  # the running header shares the form feed's line
            skip_blank = True
            continue
        if drop_header and line.strip():
            drop_header = False
            skip_blank = True
            continue  # the running header after a form feed
        if re.search(r"\[Page \d+\]\s*$", line):
            while out and not out[-1].strip():
                out.pop()
            continue
        if skip_blank and not line.strip():
            continue
        skip_blank = False
        out.append(line)
    return out


def sections(text):
    """(section number, title, lines) in document order."""
    result = []
    cur = None
    for line in page_lines(text):
        m = HEADING_RE.match(line)
        if m:
            num = m.group(2) or m.group(1).rstrip(".")
            cur = (num, line[m.end() - 1 :].strip(), [])
            result.append(cur)
        elif cur is not None:
            cur[2].append(line)
    return result


def normalise(s):
    s = re.sub(r"\s+", " ", s).strip()
    return s.replace("- ", "-")


def paragraphs(lines):
    para = []
    for line in lines + [""]:
        if line.strip():
            para.append(line)
        elif para:
            yield para
            para = []


ABBREV = ("e.g.", "i.e.", "et al.", "cf.", "vs.")


def sentences(para_text):
    # A list item's bullet ("o ") after a sentence starts a sentence of its own: a page break
    # joins the items on either side of it into one paragraph (RFC 8267 6.4.1).
    parts = re.split(r"(?<=[.?!])\s+(?:o\s+)?(?=[A-Z\"\[(])", para_text)
    merged = []
    for p in parts:
        if merged and merged[-1].endswith(ABBREV):
            merged[-1] += " " + p
        else:
            merged.append(p)
    return merged


# Lowercase key-word sentences the catalogue's checks rely on: (spec, a phrase of the
# sentence, the lowercase key word). Not normative under RFC 8174 (RFC 8166, RFC 8797);
# unclear in the drafts, which cite RFC 2119 alone.
LOWERCASE = [
    ("rfc8166", "the Responder should send an RDMA_ERROR reply", "should"),
    ("rfc8797", "a sender must use explicit RDMA data transfer operations", "must"),
    ("rfc8797", "some that must not be.", "must not"),
    ("rfc8797", "A responder therefore must not employ remote invalidation", "must not"),
    ("xcharext-02", "The rdma_xid field of this message must match", "must"),
    ("xcharext-02", "should not overlap", "should not"),
    ("rtrext-03", "must be received in order", "must"),
    ("rtrext-03", "The xid field of this message must match", "must"),
]

# Documents that follow RFC 8174 (only uppercase key words are normative): a lowercase
# statement is `no` there, `unclear` elsewhere (the drafts and RFC 5666 cite RFC 2119 alone).
RFC8174 = ("rfc8166", "rfc8797", "rfc8167", "rfc8267")


def candidates(spec):
    fname, only = SPECS[spec]
    text = (HERE / "specs" / fname).read_text(encoding="utf-8")
    for num, title, lines in sections(text):
        if title in SKIP_TITLES:
            continue
        if only and not any(num == s or num.startswith(s + ".") for s in only):
            continue
        n = 0
        for para in paragraphs(lines):
            body = normalise(" ".join(l.strip() for l in para).replace("- ", "-"))
            body = re.sub(r"^[o*] ", "", body)
            if "///" in body:
                continue  # code components (XDR and its licence)
            if '"MUST", "MUST NOT"' in body:
                continue  # the key-words paragraph (in RFC 8167's Introduction)
            for s in sentences(body):
                kws = KW_RE.findall(s)
                lower = [k for sp, phrase, k in LOWERCASE if sp == spec and phrase in s]
                if not kws and not lower:
                    continue
                n += 1
                if kws:
                    yield f"{spec}/{num}#{n}", num, min(kws, key=KEY_WORDS.index), "yes", s
                else:
                    yield f"{spec}/{num}#{n}", num, lower[0], "no" if spec in RFC8174 else "unclear", s


def main():
    spec = sys.argv[1]
    missing = "--missing" in sys.argv
    have = set()
    tsv = HERE / f"{spec}.tsv"
    if missing and tsv.exists():
        rows = tsv.read_text(encoding="utf-8").splitlines()[1:]
        have = {normalise(r.split("\t")[-1]) for r in rows if r.strip()}
    for rid, num, kw, normative, s in candidates(spec):
        if missing and any(s in h or h in s for h in have):
            continue
        print("\t".join([rid, spec, num, kw, normative, "", "", "", s]))


if __name__ == "__main__":
    main()
