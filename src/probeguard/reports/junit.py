"""JUnit XML for CI servers (Jenkins' JUnit plugin, GitLab's unit test reports): a pure
function of a ``CompareArtifact``.

One ``<testsuite name="probeguard.gate">`` holds a ``<testcase>`` per gated check
(``classname="probeguard.gate.<rule>"``), failing with the check's message and its units, and
one ``<testsuite name="probeguard.new_failures">`` a failing ``<testcase>`` per newly failing
unit, its evidence (question, both runs' evidence fields) in the failure's text. The file
validates against ``reports/data/junit.xsd`` (the structure of the Ant JUnit report that
Jenkins and GitLab read). No wall clock: ``time`` is 0 and there is no ``timestamp``, so the
same comparison gives the same bytes.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from importlib.resources import files

from probeguard.results.compare import CompareArtifact, GateCheck, GateOutcome, UnitChange

__all__ = ["compare_junit", "gate_junit", "junit_schema_path", "xml_text"]

_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""Characters XML 1.0 cannot hold (control characters an adversarial text may carry)."""


def xml_text(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot hold (each replaced by U+FFFD)."""
    return _NOT_XML.sub("\ufffd", text)


def junit_schema_path() -> str:
    """Path of the JUnit XML schema the report is checked against (package data)."""
    return str(files("probeguard.reports").joinpath("data/junit.xsd"))


def compare_junit(artifact: CompareArtifact) -> str:
    """The JUnit XML document of a comparison (module doc)."""
    return gate_junit(artifact.gate, artifact.changes)


def gate_junit(gate: GateOutcome, changes: Sequence[UnitChange] = ()) -> str:
    """The JUnit XML document of a gate's checks and the new failures among ``changes``,
    UTF-8, with an XML declaration."""
    root = ET.Element("testsuites")
    _suite(root, "probeguard.gate", 0, [_check_case(c) for c in gate.checks])
    news = [u for u in changes if u.change == "new_failure"]
    _suite(root, "probeguard.new_failures", 1, [_unit_case(u) for u in news])
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _suite(root: ET.Element, name: str, index: int, cases: list[ET.Element]) -> None:
    failures = sum(1 for c in cases if c.find("failure") is not None)
    suite = ET.SubElement(
        root,
        "testsuite",
        {
            "name": name,
            "package": name,
            "id": str(index),
            "hostname": "localhost",
            "tests": str(len(cases)),
            "failures": str(failures),
            "errors": "0",
            "skipped": "0",
            "time": "0",
        },
    )
    ET.SubElement(suite, "properties")
    suite.extend(cases)
    ET.SubElement(suite, "system-out").text = ""
    ET.SubElement(suite, "system-err").text = ""


def _check_case(check: GateCheck) -> ET.Element:
    case = ET.Element(
        "testcase",
        {"name": xml_text(check.id), "classname": f"probeguard.gate.{check.rule}", "time": "0"},
    )
    if not check.passed:
        failure = ET.SubElement(
            case, "failure", {"message": xml_text(check.message), "type": check.rule}
        )
        units = "\n".join(f"  {u}" for u in check.units)
        failure.text = xml_text(check.message + (f"\nunits:\n{units}" if units else ""))
    return case


def _unit_case(unit: UnitChange) -> ET.Element:
    case = ET.Element(
        "testcase",
        {"name": xml_text(unit.unit), "classname": "probeguard.new_failures", "time": "0"},
    )
    message = f"newly failing in {', '.join(unit.slices)}: {unit.question}"
    failure = ET.SubElement(case, "failure", {"message": xml_text(message), "type": "new_failure"})
    failure.text = xml_text(
        "\n".join(
            [
                f"question: {unit.question}",
                f"slices: {', '.join(unit.slices)}",
                "baseline: " + json.dumps(unit.baseline, ensure_ascii=False, sort_keys=True),
                "candidate: " + json.dumps(unit.candidate, ensure_ascii=False, sort_keys=True),
            ]
        )
    )
    return case
