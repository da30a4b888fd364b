"""Forms of the queue and the pile page: the queue filters, retiring members of a pile.
docs/decisions.md, "The actions" (Reason).
"""

from __future__ import annotations

from django import forms

from review.web.forms import PILE_VERSION_MISSING, PlainChoices, ReasonForm, ReasonTextForm, UndoesField
from review.web.widgets import HostSearch, LeanSelect

# Error texts the page tests assert.
UNKNOWN_HOST = "There is no host named '%(host)s'."
MEMBERS_REQUIRED = "Select at least one lesson of this pile to retire."
MEMBER_NOT_ON_ENTITY = "A selected lesson is not on this entity; reload the pile and select again."
FACT_REQUIRED = "Choose the two facts that are one."
FACT_GONE = "That fact is no longer one of this pile's; reload the pile and choose again."
FACTS_THE_SAME = "Choose two different facts: a fact is already one with itself."
MEMBER_TO_TAKE_OUT_REQUIRED = "Choose the rule to take out."
MEMBER_NOT_IN_A_GROUP = (
    "That rule is no longer in a fact with other rules of this pile; reload the pile and choose again."
)
# A retire of every live lesson of the entity asks once more (issue: stray typing can retire a whole
# entity: ``a``, ``r``, Ctrl+Enter). docs/reviewing.md, "Retiring every live lesson".
RETIRE_ALL_UNCONFIRMED = (
    "All {n} live lessons of this entity are selected: retiring them leaves it with no live lesson."
    ' Tick "Yes, retire all {n}" to retire them all, or deselect the lessons to keep.'
)
RETIRE_ALL_LABEL = "Yes, retire all {n}: this entity keeps no live lesson"
RETIRE_ONLY_UNCONFIRMED = (
    "This is the only live lesson of this entity: retiring it leaves the entity with no live lesson."
    ' Tick "Yes, retire it" to retire it anyway.'
)
RETIRE_ONLY_LABEL = "Yes, retire it: this entity keeps no live lesson"


def retire_all_texts(n: int) -> tuple[str, str]:
    """The refusal and the checkbox's label of a retire that would leave none of the entity's ``n`` live
    lessons: "All 9 live lessons…" / "Yes, retire all 9…", or for one "This is the only live lesson…" /
    "Yes, retire it…"."""
    if n == 1:
        return RETIRE_ONLY_UNCONFIRMED, RETIRE_ONLY_LABEL
    return RETIRE_ALL_UNCONFIRMED.format(n=n), RETIRE_ALL_LABEL.format(n=n)


class EmptyingConfirmed(forms.Form):
    """A retire form's ``retire_all`` checkbox: ticked, the retire may leave the entity with no live lesson;
    the form's ``clean`` asks for it when ``empties_entity()`` (docs/reviewing.md, "Retiring every live
    lesson"). ``live_count``: the entity's live lessons as the page showed them."""

    retire_all = forms.BooleanField(required=False)
    live_count = 0

    def empties_entity(self) -> bool:
        raise NotImplementedError

    def label_retire_all(self, live_count: int) -> None:
        self.live_count = live_count
        self.fields["retire_all"].label = retire_all_texts(live_count)[1]

    def clean(self):
        data = super().clean()
        if self.empties_entity() and not data.get("retire_all"):
            self.add_error("retire_all", retire_all_texts(self.live_count)[0])
        return data


RESTORE_REQUIRED = "Select at least one retired lesson to restore."
RESTORE_NOT_RESTORABLE = (
    "A selected lesson is no longer one a retire retracted on this entity; reload the pile and select again."
)


class QueueFilterForm(forms.Form):
    """The queue's GET filters, all optional: host (a name typed, checked against ``pile_counts``:
    ``host_pile_counts`` of the typed name), namespace and text (case-insensitive substrings)."""

    host = forms.CharField(required=False, max_length=64, strip=True, label="Host", widget=HostSearch)
    namespace = forms.CharField(required=False, max_length=200, strip=True, label="Namespace contains")
    q = forms.CharField(required=False, max_length=200, strip=True, label="Text")
    recurring = forms.BooleanField(required=False, label="Only piles with recurring members")

    def __init__(self, *args, pile_counts: dict[str, int], **kwargs):
        super().__init__(*args, **kwargs)
        self.pile_counts = pile_counts

    def clean_host(self) -> str:
        host = self.cleaned_data.get("host", "")
        if host and host not in self.pile_counts:
            raise forms.ValidationError(UNKNOWN_HOST, params={"host": host})
        return host

    def filters(self) -> dict[str, str | bool]:
        """``{"host", "namespace", "text", "recurring"}`` from valid data ("" / False for unset); all
        unset when invalid. ``recurring``: only piles with a recurring member (docs/piles-and-recurrence.md,
        "Recurrence")."""
        data = self.cleaned_data if self.is_valid() else {}
        return {
            "host": data.get("host", ""),
            "namespace": data.get("namespace", ""),
            "text": data.get("q", ""),
            "recurring": data.get("recurring", False),
        }


class _PileDecisionForm(ReasonForm):
    """A decision on some of a pile's lessons with one reason: the lessons (``choice_field``, its choices
    ``hashes``), the pile version the page showed and the newest decision on the entity it was built after
    (``seen_seq``: a stale refusal names those after it)."""

    choice_field = ""

    pile_version = forms.CharField(
        widget=forms.HiddenInput, error_messages={"required": PILE_VERSION_MISSING}, max_length=64
    )
    seen_seq = forms.IntegerField(widget=forms.HiddenInput, required=False, min_value=0)

    def __init__(self, *args, hashes: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields[self.choice_field].choices = PlainChoices([(h, h) for h in hashes])
        self.order_fields([self.choice_field, "reason", "reason_code", "pile_version", "seen_seq"])


class RetireForm(EmptyingConfirmed, _PileDecisionForm):
    """Retire one or more live members of a pile with one reason. ``hashes`` are the entity's lessons
    (any status: a member retired meanwhile is caught as a stale pile by the service, not here); ``live``
    the hashes of its live lessons as the page showed them.

    A selection of every live lesson is refused (``RETIRE_ALL_UNCONFIRMED`` on ``retire_all``) unless
    ``retire_all`` is ticked: stray keys (``a``, ``r``, Ctrl+Enter) must not empty an entity. Checking
    against the page's ``live`` is enough: the service refuses the retire when the entity's statuses
    changed since (``pile_version``), so ``live`` is what the service retires from. docs/reviewing.md,
    "Retiring every live lesson".
    """

    choice_field = "members"
    members = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": MEMBERS_REQUIRED, "invalid_choice": MEMBER_NOT_ON_ENTITY},
    )

    def __init__(self, *args, hashes: list[str], live: list[str], **kwargs):
        super().__init__(*args, hashes=hashes, **kwargs)
        self.live = live
        self.label_retire_all(len(live))

    def empties_entity(self) -> bool:
        """Whether the selection (once cleaned) is every live lesson of the entity."""
        chosen = set(getattr(self, "cleaned_data", {}).get("members") or ())
        return bool(self.live) and set(self.live) <= chosen


class RestoreManyForm(_PileDecisionForm):
    """Restore one or more retired lessons of a pile with one reason (issue 12, finding 7). ``hashes`` are
    the entity's lessons a retire decision retracted (``PileDetail.restorable``). Its fields' ids start
    with ``restore_`` so they do not clash with the retire form's on the same page."""

    choice_field = "lessons"
    lessons = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": RESTORE_REQUIRED, "invalid_choice": RESTORE_NOT_RESTORABLE},
    )
    undoes = UndoesField()  # posted by a retire notice's Undo only

    def __init__(self, *args, hashes: list[str], **kwargs):
        kwargs.setdefault("auto_id", "restore_%s")
        super().__init__(*args, hashes=hashes, **kwargs)


class MergeForm(ReasonTextForm):
    """Mark two facts of a pile as one (a restatement mark, not a decision; issue 22, Build 2). ``facts``:
    the pile's groups as ``(name, label)``, in pile order; the choices are their names (oldest members).
    Its fields are named ``merge-…`` so they do not clash with the retire form's on the same page."""

    fact = forms.ChoiceField(
        label="This fact",
        widget=LeanSelect,
        error_messages={"required": FACT_REQUIRED, "invalid_choice": FACT_GONE},
    )
    other = forms.ChoiceField(
        label="is the same fact as",
        widget=LeanSelect,
        error_messages={"required": FACT_REQUIRED, "invalid_choice": FACT_GONE},
    )

    field_order = ["fact", "other", "reason"]

    def __init__(self, *args, facts: list[tuple[str, str]], **kwargs):
        kwargs.setdefault("prefix", "merge")
        super().__init__(*args, **kwargs)
        choices = PlainChoices([("", "Choose a fact"), *facts])
        self.fields["fact"].choices = choices
        self.fields["other"].choices = choices
        self.fields["reason"].widget.attrs["rows"] = 2

    def clean(self):
        data = super().clean()
        if data.get("fact") and data.get("fact") == data.get("other"):
            self.add_error("other", FACTS_THE_SAME)
        return data


class SplitForm(ReasonTextForm):
    """Take one rule out of its fact as a fact of its own (a restatement mark, not a decision; issue 22,
    Build 2). ``members``: the rules in facts of two or more, as ``(hash, label)``. Fields ``split-…``."""

    member = forms.ChoiceField(
        label="Rule to take out",
        widget=LeanSelect,
        error_messages={"required": MEMBER_TO_TAKE_OUT_REQUIRED, "invalid_choice": MEMBER_NOT_IN_A_GROUP},
    )

    field_order = ["member", "reason"]

    def __init__(self, *args, members: list[tuple[str, str]], **kwargs):
        kwargs.setdefault("prefix", "split")
        super().__init__(*args, **kwargs)
        self.fields["member"].choices = PlainChoices([("", "Choose a rule"), *members])
        self.fields["reason"].widget.attrs["rows"] = 2


class ClaimForm(forms.Form):
    """The claim box's buttons: ``do`` is ``claim``, ``renew`` or ``release`` (issue 12, Build 3)."""

    do = forms.ChoiceField(choices=[("claim", "claim"), ("renew", "renew"), ("release", "release")])
