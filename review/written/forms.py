"""The consolidation editor's form: the text, the members it supersedes, the pile version, and one waiver
reason per dropped anchor (fields ``waive-<anchor>``: anchors are runs of ``[a-z0-9_]``, safe in a name).

The form checks what is typed (a member chosen among the live ones, a version); the text's limits and
the waivers are checked by ``lessons.core.written`` here and again by the service under its lock, with
the same texts. spec: docs/reviewing.md, "Writing a consolidation".
"""

from __future__ import annotations

from django import forms

from lessons.core.written import NO_MEMBERS
from review.web.forms import PILE_VERSION_MISSING

WAIVE_PREFIX = "waive-"
TEXT_INPUT_MAX = 20_000  # what the box takes before normalization; the lesson limit is checked after it
MEMBER_GONE = "Lesson %(value)s is no longer a live member of this pile; reload the pile and choose again."


class WriteForm(forms.Form):
    """``text`` (kept as typed; normalized by the service), ``members`` (live hashes of the entity),
    ``pile_version``; ``waivers()`` gives ``{anchor: reason}`` of the posted ``waive-*`` fields."""

    text = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "true"}),
        strip=False,
        required=False,
        max_length=TEXT_INPUT_MAX,
    )
    members = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": NO_MEMBERS, "invalid_choice": MEMBER_GONE},
    )
    pile_version = forms.CharField(
        widget=forms.HiddenInput, error_messages={"required": PILE_VERSION_MISSING}, max_length=64
    )

    def __init__(self, *args, hashes: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["members"].choices = [(h, h) for h in hashes]

    def waivers(self) -> dict[str, str]:
        """The posted waiver reasons, ``{anchor: reason}`` (unbound form: none)."""
        if not self.is_bound:
            return {}
        return {
            key[len(WAIVE_PREFIX) :]: value
            for key, value in self.data.items()
            if key.startswith(WAIVE_PREFIX) and isinstance(value, str)
        }
