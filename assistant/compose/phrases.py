"""The composer's wording, loaded from `phrases.yaml` (data, not code)."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from assistant.datafile import read_yaml
from assistant.understand.cues import Reading, fact_cue_keys, fact_roles


PHRASES_PATH = Path(__file__).with_name("phrases.yaml")
_MAX_BYTES = 512 * 1024


@dataclass(frozen=True)
class Fact:
    """One sentence the composer may state, with the kb documents that can ground it."""
    key: str
    en: str
    zh: str
    docs: tuple[str, ...]
    terms: tuple[str, ...]

    def text(self, lang: str, **values) -> str:
        raw = self.zh if lang == "zh" else self.en
        return raw.format(**values) if values else raw


@dataclass(frozen=True)
class Phrases:
    headings: dict
    text: dict
    leads: dict[str, Fact]
    fields: dict[str, Fact]
    facts: dict[str, Fact]
    topic_facts: dict[str, tuple[str, ...]]
    lead_topics: tuple[str, ...]
    code_topic_facts: dict[str, tuple[str, ...]]
    api_topic_facts: dict[str, tuple[str, ...]]
    pitfalls_by_feature: dict[str, tuple[str, ...]]
    rule_facts: dict[str, tuple[str, ...]]
    limitations: dict[str, tuple[str, ...]]
    cite_map: dict[str, tuple[str, ...]]
    strategy_lacks: dict[str, dict[str, str]]
    instead_facts: dict[str, str]
    feature_names: dict[str, dict[str, str]]
    strategy_can: dict = field(default_factory=dict)  # strategy -> the fact stating what it does support
    worked: dict = field(default_factory=dict)  # fact key -> the same rule worked out on the user's stated sizes
    # understand/cues.yaml's roles of the cued facts, checked against `facts` here
    answering_facts: tuple[str, ...] = ()  # facts that lead when the question's words cue them
    refusing_facts: tuple[str, ...] = ()  # facts that say the asked feature cannot be used: no config beside them
    answering_quantities: dict[str, str] = field(default_factory=dict)  # answering fact -> quantity on the user's layout
    advice_against: dict[str, str] = field(default_factory=dict)  # warning code -> the text key saying what to use instead

    @classmethod
    def load(cls, path: Path | None = None) -> "Phrases":
        """The phrasing in `path`; the bundled file is read once per process (the engine and the
        composer both ask for it, and nothing changes a loaded Phrases)."""
        return _bundled() if path is None else cls.read(path)

    @classmethod
    def read(cls, path: Path) -> "Phrases":
        data = read_yaml(path, max_bytes=_MAX_BYTES)

        def facts(section: str) -> dict[str, Fact]:
            return {
                k: Fact(k, v["en"], v["zh"], tuple(v.get("docs", ())), tuple(str(t) for t in v.get("terms", ())))
                for k, v in data[section].items()
            }

        def lists(section: str) -> dict[str, tuple[str, ...]]:
            return {str(k): tuple(v or ()) for k, v in data[section].items()}

        p = cls(
            headings=data["headings"],
            text=data["text"],
            leads=facts("leads"),
            fields=facts("fields"),
            facts=facts("facts"),
            topic_facts=lists("topic_facts"),
            lead_topics=tuple(data.get("lead_topics") or ()),
            code_topic_facts=lists("code_topic_facts"),
            api_topic_facts=lists("api_topic_facts"),
            pitfalls_by_feature=lists("pitfalls_by_feature"),
            rule_facts=lists("rule_facts"),
            limitations=lists("limitations"),
            cite_map=lists("cite_map"),
            strategy_lacks={k: dict(v or {}) for k, v in data["strategy_lacks"].items()},
            instead_facts={str(k): str(v) for k, v in (data.get("instead_facts") or {}).items()},
            feature_names=data["feature_names"],
            worked=dict(data.get("worked") or {}),
            strategy_can={str(k): str(v) for k, v in (data.get("strategy_can") or {}).items()},
            answering_facts=fact_roles().answering,
            refusing_facts=fact_roles().refusing,
            answering_quantities=dict(fact_roles().quantities),
            advice_against={str(k): str(v) for k, v in (data.get("advice_against") or {}).items()},
        )
        p._check()
        return p

    def _check(self) -> None:
        # A dangling fact key in a list is a data bug; fail at load, not mid-answer.
        for section in (self.topic_facts, self.code_topic_facts, self.api_topic_facts, self.pitfalls_by_feature,
                        self.rule_facts, self.limitations, {"instead_facts": tuple(self.instead_facts.values()),
                                                            "fact_cues": fact_cue_keys(),
                                                            "strategy_can": tuple(self.strategy_can.values()),
                                                            "refusing_facts": self.refusing_facts,
                                                            "answering_facts": self.answering_facts,
                                                            "answering_quantities": tuple(self.answering_quantities),
                                                            "worked": tuple(self.worked)}):
            for name, keys in section.items():
                missing = [k for k in keys if k not in self.facts]
                if missing:
                    raise ValueError(f"phrases.yaml: {name} names unknown facts {missing}")
        for strategy, lacks in self.strategy_lacks.items():
            missing = [k for k in lacks.values() if k not in self.facts]
            if missing:
                raise ValueError(f"phrases.yaml: strategy_lacks.{strategy} names unknown facts {missing}")

    def worked_out(self, key: str, lang: str, sizes: dict) -> str | None:
        """The fact's rule on the user's own sizes ("2 × cp_size = 2 × 4 = 8"); None when it has
        no worked form or the user did not state the sizes it needs."""
        entry = self.worked.get(key)
        if not entry:
            return None
        if isinstance(entry, list):  # alternatives, the first the user's sizes fill wins
            return next((t for e in entry if (t := self._worked_one(e, lang, sizes)) is not None), None)
        return self._worked_one(entry, lang, sizes)

    @staticmethod
    def _worked_one(entry: dict, lang: str, sizes: dict) -> str | None:
        values: dict = {}
        for name, factors in (entry.get("products") or {}).items():
            prod = 1
            for f in factors:
                v = f if isinstance(f, int) else sizes.get(f)
                if not isinstance(v, int):
                    return None
                values[f] = v
                prod *= v
            values[name] = prod
        for name, (num, den) in (entry.get("quotients") or {}).items():
            a, b = (v if isinstance(v, int) else sizes.get(v) for v in (num, den))
            if not isinstance(a, int) or not isinstance(b, int) or b <= 0:
                return None
            values.update({k: v for k, v in ((num, a), (den, b)) if isinstance(k, str)})
            values[name] = a // b
        return entry[lang].format(**values)

    def cued(self, reading: Reading, keys=None) -> list[str]:
        """The facts the reading's words single out (Reading.cued_facts; among `keys` when given)."""
        return [k for k in reading.cued_facts if keys is None or k in keys]

    def heading(self, key: str, lang: str) -> str:
        return self.headings[key][lang]

    def feature(self, key: str, lang: str) -> str:
        names = self.feature_names.get(key)
        return names[lang] if names else key

    def say(self, key: str, lang: str, **values) -> str:
        entry = self.text[key]
        raw = entry[lang]
        return raw.format(**values) if values else raw


@lru_cache(maxsize=1)
def _bundled() -> Phrases:
    return Phrases.read(PHRASES_PATH)
