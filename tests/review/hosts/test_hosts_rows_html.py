"""The hosts page's rows and topic links, built as f-strings of escaped values (``esc``): the exact HTML the
``format_html`` version gave (issue 10), with markup, quotes and non-ASCII in a description."""

from __future__ import annotations

from types import SimpleNamespace

from review.hosts.tables import hosts_rows, unmatched_topics_links

HOSTS = [
    SimpleNamespace(
        name="acme.prod-1",
        description="Orders <script>alert(\"x\")</script> & 'quotes'",
        max_active=8,
        budget_enabled=True,
        live_lessons=1234,
        entity_count=56,
        pile_count=7,
    ),
    SimpleNamespace(
        name="zeta_2",
        description="",
        max_active=3,
        budget_enabled=True,
        live_lessons=0,
        entity_count=0,
        pile_count=0,
    ),
    SimpleNamespace(
        name="off",
        description="\u00dcn\u00efcode \u2014 ok",
        max_active=1,
        budget_enabled=False,
        live_lessons=9,
        entity_count=2,
        pile_count=0,
    ),
]
WITH_BUDGET_LINKS = '<tr data-host="acme.prod-1"><td class="mono"><a href="/hosts/acme.prod-1/">acme.prod-1</a></td><td class="text">Orders &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#x27;quotes&#x27;</td><td class="nowrap">max_active <b>8</b> · <span class="state state-within">enabled</span></td><td class="num">1234</td><td class="num">56</td><td class="num"><a href="/?host=acme.prod-1" title="this host\'s piles in the queue">7</a></td><td class="nowrap"><a href="/hosts/acme.prod-1/budget/">Edit budget</a></td></tr>\n<tr data-host="zeta_2"><td class="mono"><a href="/hosts/zeta_2/">zeta_2</a></td><td class="text">—</td><td class="nowrap">max_active <b>3</b> · <span class="state state-within">enabled</span></td><td class="num">0</td><td class="num">0</td><td class="num">0</td><td class="nowrap"><a href="/hosts/zeta_2/budget/">Edit budget</a></td></tr>\n<tr data-host="off"><td class="mono"><a href="/hosts/off/">off</a></td><td class="text">Ünïcode — ok</td><td class="nowrap">max_active <b>1</b> · <span class="state state-off">disabled</span></td><td class="num">9</td><td class="num">2</td><td class="num"><span class="muted" title="budget off: no piles">—</span></td><td class="nowrap"><a href="/hosts/off/budget/">Edit budget</a></td></tr>'
READ_ONLY = '<tr data-host="acme.prod-1"><td class="mono"><a href="/hosts/acme.prod-1/">acme.prod-1</a></td><td class="text">Orders &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#x27;quotes&#x27;</td><td class="nowrap">max_active <b>8</b> · <span class="state state-within">enabled</span></td><td class="num">1234</td><td class="num">56</td><td class="num"><a href="/?host=acme.prod-1" title="this host\'s piles in the queue">7</a></td></tr>\n<tr data-host="zeta_2"><td class="mono"><a href="/hosts/zeta_2/">zeta_2</a></td><td class="text">—</td><td class="nowrap">max_active <b>3</b> · <span class="state state-within">enabled</span></td><td class="num">0</td><td class="num">0</td><td class="num">0</td></tr>\n<tr data-host="off"><td class="mono"><a href="/hosts/off/">off</a></td><td class="text">Ünïcode — ok</td><td class="nowrap">max_active <b>1</b> · <span class="state state-off">disabled</span></td><td class="num">9</td><td class="num">2</td><td class="num"><span class="muted" title="budget off: no piles">—</span></td></tr>'
TOPICS = '<a href="/hosts/acme.prod-1/unmatched-topics/">acme.prod-1</a> · <a href="/hosts/zeta_2/unmatched-topics/">zeta_2</a> · <a href="/hosts/off/unmatched-topics/">off</a>'


def test_rows_are_the_html_format_html_gave():
    assert hosts_rows(HOSTS, can_set_budget=True) == WITH_BUDGET_LINKS
    assert hosts_rows(HOSTS, can_set_budget=False) == READ_ONLY


def test_topic_links_are_the_html_format_html_join_gave():
    assert unmatched_topics_links(HOSTS) == TOPICS
