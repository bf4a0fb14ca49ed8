"""The framework tabs and the accessibility of every page, in a real browser: headless
Chromium (Debian's /usr/bin/chromium) driven by Playwright, on the built HTML served from
127.0.0.1 with every other address blocked.

Runs on the real book when the pipeline is there, and always on the hand-made book of
tests/site/book_site.py, whose twin cells differ in height so that switching moves the page.
Every page is checked by axe-core (node_modules/axe-core, pinned in package-lock.json,
installed by `make test`) in the light and the dark colour scheme.
Outside CI a machine without Chromium or axe-core skips these tests; in CI (CI set) it
fails them.
"""

import itertools
import os
import re
import warnings
from pathlib import Path

import pytest

from tests.site import book_site
from tests.site.book_site import REPO
from tools.site.browser import CHROMIUM, served

pytestmark = [pytest.mark.slow, pytest.mark.browser]

VIEWPORT = {'width': 1200, 'height': 800}
AXE = REPO / 'node_modules' / 'axe-core' / 'axe.min.js'
# WCAG 2.1 A and AA, and the best practices (among them `region`: all content in landmarks).
AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']
FAILING_IMPACTS = ('serious', 'critical')
FAILING_RULES = ('region',)  # moderate, but the book puts every part of a page in a landmark

# Runs before any script of the page: notes the classes of <html> at the moment the
# first code cell is parsed, so we can tell that the tab choice applies before paint.
FIRST_CELL_PROBE = """
window.__classesAtFirstCell = null;
new MutationObserver((records, observer) => {
  if (document.querySelector('div.cell')) {
    window.__classesAtFirstCell = document.documentElement.className;
    observer.disconnect();
  }
}).observe(document, {childList: true, subtree: true});
"""

# For each tab group: the choices of its active tabs and the frameworks of its visible cells.
GROUP_STATE = """() => [...document.querySelectorAll('.fw-group')].map(group => ({
  active: [...group.querySelectorAll('.fw-tab.fw-active')].map(tab => tab.dataset.choice),
  visible: [...group.querySelectorAll(':scope > div.cell')]
    .filter(cell => cell.getClientRects().length > 0)
    .map(cell => cell.classList.contains('tag_jax') ? 'jax' : 'pytorch'),
}))"""

VISIBLE_TAGGED = """() => [...document.querySelectorAll('div.cell.tag_pytorch, div.cell.tag_jax')]
  .filter(cell => cell.getClientRects().length > 0)
  .map(cell => cell.classList.contains('tag_jax') ? 'jax' : 'pytorch')"""


def skip_or_fail(reason):
    if os.environ.get('CI'):
        pytest.fail(reason)
    pytest.skip(reason)


def chromium_or_skip():
    """Skip outside CI where the machine has no Chromium, fail in CI (as for axe-core:
    skip_or_fail). The packages are tests/conftest.py's to check."""
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        if os.environ.get('CI'):
            pytest.fail(
                f"no browser at {CHROMIUM}: CI must install Debian's chromium "
                '(apt-get install chromium)'
            )
        pytest.skip(f'no browser at {CHROMIUM} (apt-get install chromium); CI runs this test')


@pytest.fixture(scope='module')
def server(site):
    with served(site.html) as base:
        yield base


class Session:
    """One browser context (its own localStorage) that records every console error,
    uncaught exception and attempt to reach another host."""

    def __init__(self, browser, base, javascript=True, color_scheme='light', viewport=VIEWPORT):
        self.base = base
        self.errors = []
        self.offsite = []
        self.context = browser.new_context(
            viewport=viewport, java_script_enabled=javascript, color_scheme=color_scheme
        )
        self.context.add_init_script(FIRST_CELL_PROBE)
        self.context.route('**/*', self.only_local)
        self.page = self.context.new_page()
        self.page.on(
            'console', lambda m: m.type == 'error' and self.errors.append(f'console: {m.text}')
        )
        self.page.on('pageerror', lambda e: self.errors.append(f'pageerror: {e}'))

    def only_local(self, route):
        if route.request.url.startswith(self.base):
            route.continue_()
        else:
            self.offsite.append(route.request.url)
            route.abort()

    def open(self, rel, query=''):
        self.page.goto(f'{self.base}/{rel}.html{query}')
        self.page.wait_for_load_state('load')
        return self.page

    def close(self):
        self.context.close()


@pytest.fixture
def session(browser, server):
    opened = Session(browser, server)
    yield opened
    opened.close()


def assert_showing(page, framework, loaded=True, choice=None):
    """Every group, cell and notebook link shows `framework` alone, each bar's selected tab
    being `choice` (by default the framework itself); if the page was just `loaded` (not
    switched by a click), the choice was applied before the cells parsed."""
    choice = choice or framework
    groups = page.evaluate(GROUP_STATE)
    assert groups, f'{page.url}: no tab group'
    for i, group in enumerate(groups):
        assert group['active'] == [choice], f'{page.url}: group {i} active tabs {group["active"]}'
        assert group['visible'] and set(group['visible']) == {framework}, (
            f'{page.url}: group {i} shows {group["visible"]}'
        )
    assert set(page.evaluate(VISIBLE_TAGGED)) == {framework}
    other = {'pytorch': 'jax', 'jax': 'pytorch'}[framework]
    assert page.locator(f'.fw-notebooks .fw-only-{framework} a.fw-download').is_visible()
    assert not page.locator(f'.fw-notebooks .fw-only-{other}').is_visible()
    if loaded:
        assert f'fw-{framework}' in page.evaluate('window.__classesAtFirstCell').split(), (
            'the framework class was not on <html> when the first cell was parsed'
        )


def pages_with_tabs(site):
    first = site.sections[0]
    following = site.sections[1] if len(site.sections) > 1 else first
    return first, following


def test_choice_applies_to_every_group_and_page_and_persists(session, site):
    first, following = pages_with_tabs(site)
    page = session.open(first)
    assert_showing(page, 'pytorch')

    page.locator('.fw-group').nth(0).get_by_role('tab', name='JAX').click()
    assert_showing(page, 'jax', loaded=False)
    assert (
        session.page.locator('.fw-notebooks .fw-only-jax a.fw-download')
        .get_attribute('href')
        .endswith(f'notebooks/jax/{first}.ipynb')
    )

    assert_showing(session.open(following), 'jax')
    page.reload()
    page.wait_for_load_state('load')
    assert_showing(page, 'jax')

    assert_showing(session.open(first, '?framework=pytorch'), 'pytorch')
    assert_showing(session.open(following), 'pytorch')
    assert session.errors == [] and session.offsite == []


def test_url_choice_then_click_updates_the_address(session, site):
    first, _ = pages_with_tabs(site)
    page = session.open(first, '?framework=jax')
    assert_showing(page, 'jax')
    page.locator('.fw-group').nth(0).get_by_role('tab', name='PyTorch').click()
    assert_showing(page, 'pytorch', loaded=False)
    assert 'framework=pytorch' in page.url
    page.reload()
    page.wait_for_load_state('load')
    assert_showing(page, 'pytorch')
    assert session.errors == [] and session.offsite == []


def test_clicked_tab_bar_stays_in_place(session, site):
    if site.real:
        pytest.skip('checked on the hand-made book, whose twins differ in height by design')
    page = session.open('demo/twins')
    groups = page.locator('.fw-group')
    assert groups.count() >= 2
    bar = groups.nth(1).locator('.fw-tabbar')
    bar.evaluate(
        'bar => window.scrollTo(0, bar.getBoundingClientRect().top + window.scrollY - 300)'
    )
    above_before = groups.nth(0).bounding_box()['height']
    before = bar.evaluate('bar => bar.getBoundingClientRect().top')
    assert abs(before - 300) < 2, 'the page is too short to scroll the bar to mid-screen'

    bar.get_by_role('tab', name='JAX').click()
    after = bar.evaluate('bar => bar.getBoundingClientRect().top')
    above_after = groups.nth(0).bounding_box()['height']
    assert above_after - above_before > 30, (
        'the switch should have changed the height above the bar'
    )
    assert abs(after - before) <= 3, f'the tab bar moved from {before} to {after} px'
    assert_showing(page, 'jax', loaded=False)
    assert session.errors == []


def test_without_javascript_both_versions_show_labelled(browser, server, site):
    quiet = Session(browser, server, javascript=False)
    try:
        rel = site.sections[0]
        page = quiet.open(rel)
        assert page.locator('.fw-tabbar').count() == 0
        for framework, label in (('pytorch', 'PyTorch'), ('jax', 'JAX')):
            cells = page.locator(f'div.cell.tag_{framework}')
            assert cells.count() >= 1
            for i in range(cells.count()):
                assert cells.nth(i).is_visible()
                content = cells.nth(i).evaluate(
                    "cell => getComputedStyle(cell, '::before').content"
                )
                assert content == f'"{label}"', content
            colours = cells.nth(0).evaluate(
                "cell => [getComputedStyle(cell, '::before').color,"
                " getComputedStyle(cell, '::before').backgroundColor]"
            )
            assert contrast(*map(rgb, colours)) >= 4.5, colours
            assert page.locator(f'.fw-notebooks .fw-only-{framework}').is_visible()
        assert page.locator('.fw-filler').count() >= 1
        assert page.locator('.fw-filler:visible').count() == 0
        assert quiet.offsite == []
    finally:
        quiet.close()


def test_screenshot_script_writes_a_small_png(browser, site, tmp_path):
    from tools.site.screenshot import screenshot

    out = screenshot(site.html, site.sections[0], tmp_path / 'shot.png', browser=browser)
    data = out.read_bytes()
    assert data[:8] == b'\x89PNG\r\n\x1a\n' and len(data) < 300_000
    assert int.from_bytes(data[16:20], 'big') == 1200
    both = screenshot(
        site.html,
        site.sections[0],
        tmp_path / 'both.png',
        browser=browser,
        framework='both',
        width=1600,
    )
    assert int.from_bytes(both.read_bytes()[16:20], 'big') == 1600
    assert both.read_bytes() != data


# Accessibility: axe-core on every page, the keyboard on the tab bars, printing.


def site_pages(site):
    return sorted(
        p.relative_to(site.html).with_suffix('').as_posix()
        for p in site.html.rglob('*.html')
        if '_static' not in p.parts
    )


@pytest.fixture(scope='module')
def axe_source():
    if not AXE.is_file():
        skip_or_fail(f'no {AXE.relative_to(REPO)}: run `make node` (npm ci)')
    return AXE.read_text(encoding='utf-8')


RUN_AXE = """async tags => {
  await document.fonts.ready;
  if (window.MathJax && MathJax.startup) await MathJax.startup.promise;
  // Colours measured mid-transition (the theme fades some in after the first paint)
  // are neither scheme's: wait for every finite transition and animation to end.
  const finite = document.getAnimations()
    .filter(a => a.effect.getComputedTiming().endTime !== Infinity);
  await Promise.all(finite.map(a => a.finished.catch(() => null)));
  const result = await axe.run(document, {runOnly: {type: 'tag', values: tags}});
  return result.violations.map(v => ({
    rule: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => n.target.join(' ')),
  }));
}"""


def axe_violations(page, axe_source):
    page.evaluate(axe_source)
    return page.evaluate(RUN_AXE, AXE_TAGS)


def describe_violations(found):
    return '\n'.join(
        f'{rel} [{scheme}]: {v["rule"]} ({v["impact"]}: {v["help"]}) on '
        + ', '.join(v['nodes'][:5])
        + (' ...' if len(v['nodes']) > 5 else '')
        for rel, scheme, v in found
    )


@pytest.mark.parametrize('scheme', ['light', 'dark'])
def test_every_page_passes_axe(browser, server, site, axe_source, scheme):
    # A section page is checked in "Both" (test_both_passes_axe_wide_and_narrow), which
    # shows everything that one framework's view shows, and the other framework too.
    visitor = Session(browser, server, color_scheme=scheme)
    failing, reported = [], []
    try:
        for rel in sorted(set(site_pages(site)) - set(site.sections)):
            page = visitor.open(rel)
            assert page.evaluate('document.documentElement.dataset.theme') == scheme, rel
            for violation in axe_violations(page, axe_source):
                fails = (
                    violation['impact'] in FAILING_IMPACTS or violation['rule'] in FAILING_RULES
                )
                (failing if fails else reported).append((rel, scheme, violation))
    finally:
        visitor.close()
    if reported:
        warnings.warn('axe-core, not failing:\n' + describe_violations(reported), stacklevel=1)
    assert not failing, 'axe-core violations:\n' + describe_violations(failing)


TAB_STATE = """() => [...document.querySelectorAll('.fw-tabbar')]
  .map(bar => [...bar.children].map(tab => ({
    id: tab.id, choice: tab.dataset.choice, role: tab.getAttribute('role'),
    tabindex: tab.getAttribute('tabindex'),
    selected: tab.getAttribute('aria-selected'),
    controls: (tab.getAttribute('aria-controls') || '').split(' '),
  })))"""

PANEL = """id => { const el = document.getElementById(id); return el && {
  role: el.getAttribute('role'), labelledby: el.getAttribute('aria-labelledby'),
  framework: el.classList.contains('tag_jax') ? 'jax'
    : el.classList.contains('tag_pytorch') ? 'pytorch' : null,
  group: [...document.querySelectorAll('.fw-group')].indexOf(el.parentElement),
}; }"""

FOCUSED = """() => { const el = document.activeElement; const bar = el.closest('.fw-tabbar');
  return {id: el.id, tab: el.classList.contains('fw-tab'),
          bar: bar ? [...document.querySelectorAll('.fw-tabbar')].indexOf(bar) : -1}; }"""


def test_tabs_control_their_panels_with_one_tab_stop_per_bar(session, site):
    page = session.open(site.sections[0])
    bars = page.evaluate(TAB_STATE)
    assert bars
    for i, tabs in enumerate(bars):
        assert [t['choice'] for t in tabs] == ['pytorch', 'jax', 'both'], f'bar {i}: {tabs}'
        assert all(t['role'] == 'tab' for t in tabs), f'bar {i}: {tabs}'
        assert [t['tabindex'] for t in tabs if t['selected'] == 'true'] == ['0'], (
            f'bar {i}: {tabs}'
        )
        assert all(t['tabindex'] == '-1' for t in tabs if t['selected'] != 'true'), (
            f'bar {i}: {tabs}'
        )
        tab_of = {t['choice']: t['id'] for t in tabs}
        for tab in tabs:
            for panel_id in tab['controls']:
                panel = page.evaluate(PANEL, panel_id)
                framework = tab['choice'] if tab['choice'] != 'both' else panel['framework']
                assert panel == {
                    'role': 'tabpanel',
                    'labelledby': tab_of[framework],
                    'framework': framework,
                    'group': i,
                }, (tab, panel)
        # "Both" controls the panels of every framework's tab.
        both = next(t for t in tabs if t['choice'] == 'both')
        assert both['controls'] == [c for t in tabs[:-1] for c in t['controls']], tabs
    controlled = sum(len(t['controls']) for tabs in bars for t in tabs[:-1])
    assert controlled == page.locator('.fw-group > div.cell').count()


def test_tab_key_stops_once_at_each_tab_bar(session, site):
    page = session.open(site.sections[0])
    wanted = min(2, page.locator('.fw-tabbar').count())
    stops = []
    while len(stops) < 400 and len({s['bar'] for s in stops} - {-1}) < wanted:
        page.keyboard.press('Tab')
        stops.append(page.evaluate(FOCUSED))
    page.keyboard.press('Tab')
    stops.append(page.evaluate(FOCUSED))
    bar_stops = [s['bar'] for s in stops if s['bar'] >= 0]
    assert len(set(bar_stops)) == wanted, (
        f'Tab did not reach {wanted} tab bars in {len(stops)} presses'
    )
    assert len(bar_stops) == wanted, f'a tab bar took several Tab stops: {bar_stops}'
    assert all(s['tab'] for s in stops if s['bar'] >= 0)


def focus_selected_tab(page, group=0):
    tab = page.locator('.fw-tabbar').nth(group).locator('.fw-tab[aria-selected=true]')
    tab.focus()
    return tab


def assert_focused(page, group, framework):
    focused = page.evaluate(FOCUSED)
    assert focused['bar'] == group and focused['id'].endswith(f'-{framework}'), focused


def test_arrow_home_and_end_keys_select_for_the_whole_page(session, site):
    page = session.open(site.sections[0])
    group = page.locator('.fw-tabbar').count() - 1
    focus_selected_tab(page, group)
    # At 1200 px "Both" is not offered: the keys move between the two frameworks.
    for key, framework in (
        ('ArrowRight', 'jax'),
        ('ArrowRight', 'pytorch'),
        ('ArrowLeft', 'jax'),
        ('Home', 'pytorch'),
        ('End', 'jax'),
    ):
        page.keyboard.press(key)
        assert_showing(page, framework, loaded=False)
        assert_focused(page, group, framework)
    page.keyboard.press('ArrowDown')  # not a key of horizontal tabs
    assert_showing(page, 'jax', loaded=False)
    page.reload()
    page.wait_for_load_state('load')
    assert_showing(page, 'jax')
    assert session.errors == []


def test_the_keys_reach_both_on_a_wide_screen(wide, site):
    page = wide.open(site.sections[0], '?framework=jax')
    focus_selected_tab(page)
    page.keyboard.press('ArrowRight')
    assert_focused(page, 0, 'both')
    assert_side_by_side(page)
    page.keyboard.press('ArrowRight')  # round to the first tab
    assert_showing(page, 'pytorch', loaded=False)
    assert_focused(page, 0, 'pytorch')


def test_key_selected_tab_bar_stays_in_place(session, site):
    if site.real:
        pytest.skip('checked on the hand-made book, whose twins differ in height by design')
    page = session.open('demo/twins')
    bar = page.locator('.fw-tabbar').nth(1)
    bar.evaluate(
        'bar => window.scrollTo(0, bar.getBoundingClientRect().top + window.scrollY - 300)'
    )
    focus_selected_tab(page, 1)
    before = bar.evaluate('bar => bar.getBoundingClientRect().top')
    page.keyboard.press('ArrowRight')
    after = bar.evaluate('bar => bar.getBoundingClientRect().top')
    assert_showing(page, 'jax', loaded=False)
    assert abs(after - before) <= 3, f'the tab bar moved from {before} to {after} px'


def rgb(css):
    """(r, g, b) of a computed CSS colour 'rgb(...)' or 'rgba(...)'; None if transparent."""
    values = [float(v) for v in re.findall(r'[\d.]+', css)]
    return None if len(values) == 4 and values[3] == 0 else tuple(values[:3])


def contrast(a, b):
    def luminance(colour):
        c = [v / 255 for v in colour]
        c = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


TAB_COLOURS = """tab => {
  const backdrop = el => { for (; el; el = el.parentElement) {
    const c = getComputedStyle(el).backgroundColor;
    if (!/rgba\\(.*, 0\\)$/.test(c) && c !== 'transparent') return c; }
    return 'rgb(255, 255, 255)'; };
  const style = getComputedStyle(tab);
  return {color: style.color, background: backdrop(tab), page: backdrop(tab.parentElement),
          outline: style.outlineStyle, width: parseFloat(style.outlineWidth),
          ring: style.outlineColor};
}"""


@pytest.mark.parametrize('scheme', ['light', 'dark'])
def test_focus_ring_and_tab_text_contrast(browser, server, site, scheme):
    visitor = Session(browser, server, color_scheme=scheme)
    try:
        page = visitor.open(site.sections[0])
        focus_selected_tab(page)
        page.keyboard.press('ArrowRight')  # a keyboard focus: :focus-visible applies
        focused = page.locator('.fw-tabbar').nth(0).locator('.fw-tab.fw-active')
        colours = focused.evaluate(TAB_COLOURS)
        assert colours['outline'] != 'none' and colours['width'] >= 2, colours
        assert contrast(rgb(colours['ring']), rgb(colours['page'])) >= 3, colours
        assert contrast(rgb(colours['color']), rgb(colours['background'])) >= 4.5, colours
        others = page.locator('.fw-tabbar').nth(0).locator('.fw-tab:not(.fw-active)')
        assert others.count() == 2
        for i in range(others.count()):
            other = others.nth(i).evaluate(TAB_COLOURS)
            assert contrast(rgb(other['color']), rgb(other['background'])) >= 4.5, other
    finally:
        visitor.close()


def test_print_shows_the_selected_framework_without_tabs_or_sidebars(session, site):
    page = session.open(site.sections[0], '?framework=jax')
    page.emulate_media(media='print')
    assert set(page.evaluate(VISIBLE_TAGGED)) == {'jax'}
    for hidden in ('.fw-tabbar', '.bd-sidebar-primary', '.bd-sidebar-secondary', '.bd-header'):
        boxes = page.locator(hidden)
        assert all(not boxes.nth(i).is_visible() for i in range(boxes.count())), hidden
    assert page.locator(
        '.fw-group div.cell.tag_jax .cell_output, .fw-group div.cell.tag_jax .cell_input'
    ).first.is_visible()


# "Both": the frameworks side by side on a wide screen, one at a time on a narrow one.

WIDE = {'width': 1440, 'height': 900}  # frameworks.js's SIDE_BY_SIDE_MIN, where "Both" starts
NARROW = {'width': 390, 'height': 844}

# Every tab group as laid out: its box, its bar's, and for each cell its framework, box,
# input box, output boxes and the rows of its code (lines and fillers).
LAYOUT = """() => {
  const box = el => { const r = el.getBoundingClientRect();
    return {left: r.left, right: r.right, top: r.top, bottom: r.bottom, width: r.width,
            height: r.height}; };
  return [...document.querySelectorAll('.fw-group')].map(group => ({
    box: box(group),
    bar: box(group.querySelector('.fw-tabbar')),
    same: group.classList.contains('fw-same-code'),
    sameOutput: group.classList.contains('fw-same-output'),
    closed: group.classList.contains('fw-folded') && !group.querySelector('details[open]'),
    summaries: [...group.querySelectorAll('summary')].filter(el => el.checkVisibility()).map(box),
    inputs: [...group.querySelectorAll('.cell_input')].filter(el => el.checkVisibility()).map(box),
    outputs: [...group.querySelectorAll('.cell_output')].filter(el => el.checkVisibility())
      .map(box),
    cells: [...group.querySelectorAll(':scope > div.cell')].map(cell => {
      const input = [...cell.querySelectorAll('.cell_input')].find(el => el.checkVisibility());
      return {
        framework: cell.classList.contains('tag_jax') ? 'jax' : 'pytorch',
        shown: cell.checkVisibility(),
        box: box(cell),
        label: getComputedStyle(cell, '::before').content,
        input: input && box(input),
        outputs: [...cell.querySelectorAll('.cell_output')].filter(el => el.checkVisibility())
          .map(box),
        rows: [...cell.querySelectorAll('.cell_input pre > :is(.fw-line, .fw-filler)')]
          .map(row => ({top: row.getBoundingClientRect().top, text: row.textContent,
                        filler: row.classList.contains('fw-filler'),
                        changed: row.classList.contains('fw-changed'),
                        shown: row.checkVisibility()})),
      };
    }),
  }));
}"""

# The paragraphs of the article outside tab groups (their left and right edges) and the
# untagged cells (their widths), and the width of the article's text.
ACROSS = """() => {
  const article = document.querySelector('article.bd-article');
  const style = getComputedStyle(article);
  const inner = article.getBoundingClientRect();
  return {
    prose: [...document.querySelectorAll('article section > p')]
      .filter(p => !p.closest('.fw-group') && p.getClientRects().length)
      .map(p => { const r = p.getBoundingClientRect(); return [r.left, r.right]; }),
    cells: [...document.querySelectorAll('article div.cell')]
      .filter(c => !c.closest('.fw-group') && c.getClientRects().length)
      .map(c => c.getBoundingClientRect().width),
    text: [inner.left + parseFloat(style.paddingLeft),
           inner.right - parseFloat(style.paddingRight)],
  };
}"""
MEASURE = 40 * 16  # frameworks.css: prose at most 40rem wide side by side


def twin_pairs(group):
    """The (PyTorch, JAX) cells of a group that stand next to each other."""
    cells = group['cells']
    return [
        (a, b)
        for a, b in itertools.pairwise(cells)
        if (a['framework'], b['framework']) == ('pytorch', 'jax')
    ]


def assert_across(box, group, where, inset=0):
    """`box` spans the group's width (less `inset` px on the left: a fold's bar)."""
    assert 0 <= box['left'] - group['box']['left'] < inset + 1, (where, box)
    assert abs(box['right'] - group['box']['right']) < 1, (where, box)


def assert_same_code_once(group, where):
    """Twins with the same code: the code once, across both columns, and under it each
    framework's outputs in its column (or, when they are the same too, once, across)."""
    (code,) = group['inputs']
    assert_across(code, group, where)
    if group['sameOutput']:
        assert_same_output_once(group, where)
        return
    middle = group['box']['left'] + group['box']['width'] / 2
    for cell in group['cells']:
        for output in cell['outputs']:
            assert output['top'] >= code['bottom'] - 0.5, (where, output)
            if cell['framework'] == 'pytorch':
                assert output['right'] < middle, (where, output)
            else:
                assert output['left'] > middle, (where, output)


def assert_same_output_once(group, where):
    """Twins whose outputs are the same: the outputs once, across both columns, under
    the code of both."""
    assert group['outputs'], where
    for output in group['outputs']:
        assert_across(output, group, where)
        assert all(output['top'] >= code['bottom'] - 0.5 for code in group['inputs']), where
    shown = [cell for cell in group['cells'] if cell['outputs']]
    assert len(shown) == 1 and shown[0]['framework'] == 'pytorch', (where, shown)


def assert_folded_once(group, where):
    """Twins folded whole, closed: one toggle, across both columns."""
    (summary,) = group['summaries']
    assert_across(summary, group, where, inset=4)
    assert [cell['framework'] for cell in group['cells'] if cell['shown']] == ['pytorch'], where


def assert_side_by_side(page):
    """Every group shows PyTorch in the left column and JAX in the right, under a bar
    across both; twins start level, their rows aligned line for line, the rows that differ
    marked; outputs under their code; prose and untagged cells across both columns."""
    assert 'fw-side' in page.evaluate('document.documentElement.className').split()
    groups = page.evaluate(LAYOUT)
    assert groups, f'{page.url}: no tab group'
    rows_checked = 0
    for g, group in enumerate(groups):
        where = f'{page.url}: group {g}'
        middle = group['box']['left'] + group['box']['width'] / 2
        assert abs(group['bar']['width'] - group['box']['width']) < 1, where
        if group['same']:
            assert_same_code_once(group, where)
            continue
        if group['closed']:
            assert_folded_once(group, where)
            continue
        if group['sameOutput']:  # the cells' code in its columns, their outputs across
            assert_same_output_once(group, where)
        column = 'input' if group['sameOutput'] else 'box'
        for cell in group['cells']:
            left, right = cell[column]['left'], cell[column]['right']
            if cell['framework'] == 'pytorch':
                assert abs(left - group['box']['left']) < 1 and right < middle, (where, cell)
            else:
                assert left > middle and abs(right - group['box']['right']) < 1, (where, cell)
            assert cell['label'] == ('"PyTorch"' if cell['framework'] == 'pytorch' else '"JAX"')
            for output in cell['outputs'] if not group['sameOutput'] else []:
                assert cell['input'] is None or output['top'] >= cell['input']['bottom'] - 0.5
                assert left - 0.5 <= output['left'] and output['right'] <= right + 0.5, where
        for torch_cell, jax_cell in twin_pairs(group):
            assert abs(torch_cell[column]['top'] - jax_cell[column]['top']) < 0.5, where
            a, b = torch_cell['rows'], jax_cell['rows']
            assert len(a) == len(b), f'{where}: {len(a)} rows against {len(b)}'
            for k, (x, y) in enumerate(zip(a, b, strict=True)):
                if not (x['shown'] and y['shown']):  # a hidden input (hide-input)
                    continue
                assert abs(x['top'] - y['top']) < 0.5, f'{where}, row {k}: {x} against {y}'
                assert not (x['filler'] and y['filler']), f'{where}, row {k}'
                if x['filler'] or y['filler']:
                    assert (x['changed'] or x['filler']) and (y['changed'] or y['filler'])
                else:
                    differ = x['text'] != y['text']
                    assert x['changed'] == y['changed'] == differ, f'{where}, row {k}: {x} {y}'
                rows_checked += 1
    # Prose at a reading measure, in the middle; untagged cells across both columns.
    across = page.evaluate(ACROSS)
    width = groups[0]['box']['width']
    (start, end) = across['text']
    assert across['prose'], across
    for left, right in across['prose']:
        assert right - left <= MEASURE + 1, (page.url, left, right)
        assert abs((left - start) - (end - right)) < 2, (page.url, left, right, start, end)
    assert all(w > 0.9 * width for w in across['cells']), (across, width)
    assert page.locator('.fw-tab[data-choice=both]:visible').count() == len(groups)
    return rows_checked


SETTLED = """async side => {
  await new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  if (document.documentElement.classList.contains('fw-side') !== side) return false;
  const finite = document.getAnimations()
    .filter(a => a.effect.getComputedTiming().endTime !== Infinity);
  await Promise.all(finite.map(a => a.finished.catch(() => null)));
  return true;
}"""


def resize(page, viewport, side):
    """Resize the window and wait for the tab script and the theme's transitions."""
    page.set_viewport_size(viewport)
    page.wait_for_function(SETTLED, arg=side)


@pytest.fixture
def wide(browser, server):
    opened = Session(browser, server, viewport=WIDE)
    yield opened
    opened.close()


@pytest.fixture
def narrow(browser, server):
    opened = Session(browser, server, viewport=NARROW)
    yield opened
    opened.close()


def test_both_shows_the_twins_side_by_side_on_a_wide_screen(wide, site):
    rows = 0
    for rel in site.sections:
        page = wide.open(rel, '?framework=both')
        assert 'fw-side' in page.evaluate('window.__classesAtFirstCell').split(), rel
        rows += assert_side_by_side(page)
    assert rows > 0, 'no twin rows were compared'
    assert wide.errors == [] and wide.offsite == []


def test_twins_are_aligned_row_by_row_with_the_differences_marked(wide, site):
    if site.real:
        pytest.skip('the hand-made book knows its twins line by line')
    page = wide.open('demo/twins', '?framework=both')
    net = page.locator('.fw-group').filter(has_text='class Net')
    rows = net.evaluate(
        """group => [...group.querySelectorAll('div.cell')].map(cell =>
          [...cell.querySelectorAll('pre > .fw-line, pre > .fw-filler')].map(row =>
            row.classList.contains('fw-filler') ? '~'
              : (row.classList.contains('fw-changed') ? '*' : ' ') + row.textContent.trim()))"""
    )
    assert rows == [
        [
            '*class Net(nn.Module):',
            '*def __init__(self):',
            '*super().__init__()',
            '*self.dense = nn.Linear(2, 2)',
            ' ',
            '*def forward(self, x):',
            ' return self.dense(x)',
            '~',
            '~',
        ],
        [
            '*class Net(nnx.Module):',
            '*def __init__(self, *, rngs):',
            '~',
            '*self.dense = nnx.Linear(2, 2, rngs=rngs)',
            ' ',
            '*def __call__(self, x):',
            ' return self.dense(x)',
            '*',
            '*net = Net(rngs=nnx.Rngs(0))',
        ],
    ]


def test_twins_with_the_same_code_show_it_once_across_both_columns(wide, site):
    if site.real:
        pytest.skip('the hand-made book knows which twins have the same code')
    page = wide.open('demo/twins', '?framework=both')
    same = page.locator('.fw-group.fw-same-code')
    assert same.count() == 1 and 'd2l.plot' in same.inner_text()
    assert page.locator('.fw-group').count() > 1, 'the other twins keep their columns'
    assert_side_by_side(page)  # the code once, across; each framework's plot below it
    page.locator('.fw-tab[data-choice=jax]').first.click()
    jax_code = same.locator('div.cell.tag_jax div.cell_input')
    assert jax_code.is_visible() and not same.locator('div.cell.tag_pytorch').is_visible()
    assert wide.errors == []


def test_hidden_sources_open_and_close_with_their_twins(wide, site):
    if site.real:
        pytest.skip('the hand-made book has twins whose sources are hidden (hide-input)')
    page = wide.open('demo/more', '?framework=both')
    group = page.locator('.fw-group').filter(has=page.locator('div.cell.tag_hide-input'))
    details = group.locator('div.cell details')
    opened = 'els => els.map(el => el.open)'
    assert details.count() == 2 and details.evaluate_all(opened) == [False, False]
    rows = assert_side_by_side(page)
    group.locator('div.cell.tag_pytorch summary').click()
    page.wait_for_function(
        'group => [...group.querySelectorAll("details")].every(el => el.open)',
        arg=group.element_handle(),
    )
    assert assert_side_by_side(page) == rows + 3  # the twins' three rows, now shown
    group.locator('div.cell.tag_jax summary').click()
    page.wait_for_function(
        'group => [...group.querySelectorAll("details")].every(el => !el.open)',
        arg=group.element_handle(),
    )
    assert wide.errors == []


def test_side_by_side_prose_shows_every_version_labelled(wide, site):
    page = wide.open(site.sections[0], '?framework=both')
    if site.real:  # the page of the book that quotes values and has per-framework prose
        page = wide.open('transformer-block/block-by-hand', '?framework=both')
    values = page.locator('.fw-value:not(.fw-same)')
    assert values.count() >= 2
    labels = {'pytorch': 'PyTorch', 'jax': 'JAX'}
    for i in range(values.count()):
        value = values.nth(i)
        assert value.is_visible()
        framework = 'jax' if 'fw-only-jax' in value.get_attribute('class') else 'pytorch'
        label = value.evaluate("span => getComputedStyle(span, '::before').content")
        assert labels[framework] in label, label
    same = page.locator('.fw-value.fw-same')  # values that read the same: once, unlabelled
    for i in range(same.count()):
        assert same.nth(i).is_visible()
        label = same.nth(i).evaluate("span => getComputedStyle(span, '::before').content")
        assert label in ('none', 'normal', '""'), label
    for framework, label in labels.items():
        prose = page.locator(f'div.fw-only-{framework}')
        assert prose.count() >= 1
        for i in range(prose.count()):
            assert prose.nth(i).is_visible()
            content = prose.nth(i).evaluate("div => getComputedStyle(div, '::before').content")
            assert content == f'"{label}"', content
        assert page.locator(f'.fw-notebooks .fw-only-{framework}').is_visible()


def test_copy_button_copies_the_code_without_fillers(browser, server, site):
    visitor = Session(browser, server, viewport=WIDE)
    visitor.context.grant_permissions(['clipboard-read', 'clipboard-write'])
    try:
        page = visitor.open(site.sections[0], '?framework=both')
        cell = page.locator('div.cell.tag_pytorch:has(pre > .fw-filler)').first
        expected = cell.locator('pre').evaluate(
            """pre => [...pre.querySelectorAll(':scope > .fw-line')]
              .map(line => line.textContent).join('')"""
        )
        assert cell.locator('pre > .fw-filler').count() >= 1
        cell.locator('pre').hover()
        cell.locator('button.copybtn').click()
        copied = page.evaluate('navigator.clipboard.readText()')
        assert copied.rstrip('\n') == expected.rstrip('\n'), (copied, expected)
    finally:
        visitor.close()


def test_a_narrow_screen_offers_no_both_and_shows_one_framework(narrow, site):
    """Side by side needs a wide window: a narrow one offers no "Both" tab (nor reaches it
    by the keyboard); a choice of "Both" shows the framework chosen alone last, its tab
    selected, and the columns return when the window is wide enough."""
    rel = site.sections[0]
    page = narrow.open(rel, '?framework=both')
    classes = page.evaluate('document.documentElement.className').split()
    assert 'fw-both' in classes and 'fw-side' not in classes
    assert_showing(page, 'pytorch')
    assert page.locator('.fw-filler:visible').count() == 0
    assert page.locator('.fw-tab[data-choice=both]:visible').count() == 0
    assert page.locator('.fw-group').first.get_by_role('tab', name='Both').count() == 0
    first = page.locator('.fw-tabbar').first
    first.get_by_role('tab', name='PyTorch').focus()
    page.keyboard.press('ArrowLeft')  # wraps round to the last tab shown: JAX, not Both
    assert_showing(page, 'jax', loaded=False)
    page.keyboard.press('ArrowRight')
    assert_showing(page, 'pytorch', loaded=False)

    # Chosen alone last, JAX is what "Both" shows; on a wide window the columns return.
    first.get_by_role('tab', name='JAX').click()
    resize(page, WIDE, side=False)
    first.get_by_role('tab', name='Both').click()
    assert_side_by_side(page)
    resize(page, NARROW, side=False)
    assert_showing(page, 'jax', loaded=False)
    assert page.locator('.fw-tab[data-choice=both]:visible').count() == 0
    resize(page, WIDE, side=True)
    assert_side_by_side(page)
    assert narrow.errors == [] and narrow.offsite == []


def test_both_is_remembered_and_set_by_the_address(wide, site):
    first, following = pages_with_tabs(site)
    page = wide.open(first)
    page.locator('.fw-group').first.get_by_role('tab', name='Both').click()
    assert_side_by_side(page)
    assert_side_by_side(wide.open(following))
    page.reload()
    page.wait_for_load_state('load')
    assert_side_by_side(page)
    assert_showing(wide.open(first, '?framework=jax'), 'jax')
    page = wide.open(first, '?framework=both')
    assert_side_by_side(page)
    page.locator('.fw-group').first.get_by_role('tab', name='PyTorch').click()
    assert 'framework=pytorch' in page.url
    assert_showing(page, 'pytorch', loaded=False)
    assert_showing(wide.open(following), 'pytorch')
    assert wide.errors == []


@pytest.mark.parametrize('scheme', ['light', 'dark'])
def test_both_passes_axe_wide_and_narrow(browser, server, site, axe_source, scheme):
    failing, reported = [], []
    for viewport in (WIDE, NARROW):
        visitor = Session(browser, server, color_scheme=scheme, viewport=viewport)
        try:
            for rel in site.sections if viewport is WIDE else site.sections[:1]:
                page = visitor.open(rel, '?framework=both')
                where = f'{rel} at {viewport["width"]} px'
                for violation in axe_violations(page, axe_source):
                    fails = (
                        violation['impact'] in FAILING_IMPACTS
                        or violation['rule'] in FAILING_RULES
                    )
                    (failing if fails else reported).append((where, scheme, violation))
        finally:
            visitor.close()
    if reported:
        warnings.warn('axe-core, not failing:\n' + describe_violations(reported), stacklevel=1)
    assert not failing, 'axe-core violations:\n' + describe_violations(failing)


SIDEBARS = """() => {
  const shown = el => !!el && el.checkVisibility({visibilityProperty: true})
    && el.getBoundingClientRect().right > 0;
  const group = document.querySelector('.fw-group');
  const dialog = document.getElementById('pst-secondary-sidebar-modal');
  return {
    side: document.documentElement.classList.contains('fw-side'),
    primary: shown(document.getElementById('pst-primary-sidebar')),
    secondary: shown(document.querySelector('div.bd-sidebar-secondary')),
    contents: !!dialog && dialog.open && shown(dialog) && !!dialog.querySelector('nav a'),
    group: group && group.getBoundingClientRect().width,
  };
}"""


def sidebars(page):
    page.wait_for_function(SETTLED, arg=page.evaluate(SIDE))
    return page.evaluate(SIDEBARS)


SIDE = "() => document.documentElement.classList.contains('fw-side')"


def test_both_folds_the_sidebars_and_the_theme_buttons_open_them(wide, site):
    """Side by side, the navigation and the page's contents are folded away, as the
    theme's buttons fold them, so that the columns get the window's width; the buttons
    open them again, and one framework alone brings them back."""
    page = wide.open(site.sections[0], '?framework=both')
    state = sidebars(page)
    assert state['side'] and not state['primary'] and not state['secondary'], state
    assert state['group'] >= WIDE['width'] - 2 * 32 - 1, state  # the article's padding only
    navigation = page.locator('.bd-header-article button.primary-toggle')
    navigation.click()
    state = sidebars(page)
    assert state['side'] and state['primary'] and state['group'] < 0.85 * WIDE['width'], state
    navigation.click()
    assert not sidebars(page)['primary']
    page.locator('.bd-header-article button.secondary-toggle').click()
    assert sidebars(page)['contents'], 'the contents button opened no contents'
    page.keyboard.press('Escape')
    assert not sidebars(page)['contents']
    page.locator('.fw-group').first.get_by_role('tab', name='PyTorch').click()
    state = sidebars(page)
    assert not state['side'] and state['primary'] and state['secondary'], state
    page.locator('.fw-group').first.get_by_role('tab', name='Both').click()
    state = sidebars(page)
    assert state['side'] and not state['primary'] and not state['secondary'], state
    # A page without twin cells has no columns to make room for: it keeps its sidebars.
    state = sidebars(wide.open('index'))
    assert state['side'] and state['primary'], state
    assert wide.errors == []


# Characters on each line of the prose outside tab groups and cells: paragraphs, list
# items, definitions, captions. The longest line's length and its start.
LONGEST_LINE = """() => {
  const blocks = [...document.querySelectorAll(
      'article.bd-article :is(p, li, dt, dd, figcaption)')]
    .filter(el => !el.closest('.fw-group, div.cell, table, nav') && el.getClientRects().length);
  const range = document.createRange();
  let most = 0, text = '';
  for (const block of blocks) {
    const lines = new Map();
    const walker = document.createTreeWalker(block, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (let i = 0; i < node.length; i++) {
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect || !rect.width) continue;
        const key = Math.round(rect.bottom);
        lines.set(key, (lines.get(key) || '') + node.data[i]);
      }
    }
    for (const line of lines.values()) {
      if (line.length > most) [most, text] = [line.length, line];
    }
  }
  return {most, text};
}"""


@pytest.mark.parametrize('width', [1920, WIDE['width']])
def test_prose_keeps_a_reading_measure_side_by_side(browser, server, site, width):
    """The twin columns take the window's width; prose, lists and captions keep a
    measure of at most 100 characters a line."""
    visitor = Session(browser, server, viewport={'width': width, 'height': 900})
    try:
        for rel in site.sections:
            page = visitor.open(rel, '?framework=both')
            assert page.evaluate(SIDE), rel
            page.wait_for_function('() => document.fonts.status === "loaded"')
            longest = page.evaluate(LONGEST_LINE)
            assert 0 < longest['most'] <= 100, f'{rel} at {width} px: {longest}'
            groups = page.evaluate(LAYOUT)
            assert groups[0]['box']['width'] >= width - 2 * 32 - 1, rel  # the whole width
        assert visitor.errors == []
    finally:
        visitor.close()


PAGE_WIDTH = """() => ({width: document.documentElement.scrollWidth,
  widest: [...document.querySelectorAll('article *')]
    .filter(el => el.getBoundingClientRect().right > innerWidth + 0.5
      && !el.closest('pre, .pst-scrollable-table-container, mjx-container, .MathJax'))
    .slice(0, 3).map(el => el.tagName + '.' + el.className + ': '
      + (el.textContent || '').trim().slice(0, 60))})"""


def test_no_page_is_wider_than_a_phone(browser, server, site):
    """At 390 px (a phone), no page scrolls sideways: a long name in inline code breaks
    (code and wide tables scroll in their own boxes)."""
    visitor = Session(browser, server, viewport=NARROW)
    try:
        wider = []
        for rel in site_pages(site):
            page = visitor.open(rel)
            found = page.evaluate(PAGE_WIDTH)
            if found['width'] > NARROW['width']:
                wider.append(f'{rel}: {found["width"]} px, {found["widest"]}')
        assert not wider, 'pages wider than a phone:\n' + '\n'.join(wider)
        if not site.real:  # the demo's long inline literal breaks, in a line of its own
            page = visitor.open('demo/twins')
            literal = page.locator('p code.literal', has_text=book_site.LONG_LITERAL)
            box = literal.bounding_box()
            assert box['x'] + box['width'] <= NARROW['width'], box
        assert visitor.errors == []
    finally:
        visitor.close()


# Each group's visible outputs, as text, by framework column (pytorch, jax, or across).
OUTPUT_TEXTS = """() => [...document.querySelectorAll('.fw-group')].map(group => ({
  same: group.classList.contains('fw-same-output'),
  outputs: [...group.querySelectorAll(':scope > div.cell > div.cell_output')]
    .filter(el => el.checkVisibility())
    .map(el => ({framework: el.closest('div.cell.tag_jax') ? 'jax' : 'pytorch',
                 text: el.innerText.trim(),
                 images: [...el.querySelectorAll('img')].map(img => img.src)})),
}))"""


def test_identical_outputs_show_once_across_both_columns(wide, site):
    """Twins that print the same (their code apart) show their outputs once, across both
    columns, as twins with the same code show their code once; each framework alone
    still shows its own."""
    marked = 0
    for rel in site.sections:
        page = wide.open(rel, '?framework=both')
        for k, group in enumerate(page.evaluate(OUTPUT_TEXTS)):
            where = f'{rel}: group {k}'
            by = {}
            for output in group['outputs']:
                by.setdefault(output['framework'], []).append(output)
            if group['same']:
                marked += 1
                assert list(by) == ['pytorch'], (where, group)
                continue
            if set(by) == {'pytorch', 'jax'}:
                shown = [[(o['text'], o['images']) for o in by[fw]] for fw in ('pytorch', 'jax')]
                assert shown[0] != shown[1], f'{where}: the same outputs twice, side by side'
        assert_side_by_side(page)
    assert marked > 0, 'no twins with the same outputs'
    if not site.real:
        page = wide.open('demo/twins', '?framework=both')
        group = page.locator('.fw-group.fw-same-output')
        assert group.count() == 1 and book_site.SAME_OUTPUT.strip() in group.inner_text()
        for framework, label in (('jax', 'JAX'), ('pytorch', 'PyTorch')):
            group.get_by_role('tab', name=label).click()
            output = group.locator(f'div.cell.tag_{framework} div.cell_output')
            assert output.is_visible() and book_site.SAME_OUTPUT.strip() in output.inner_text()
    assert wide.errors == []


# Every visible mark of a differing token: its decoration, and the contrast of each piece
# of its text against what lies under it (its tint over the line's over the code box's).
TOKEN_MARKS = """() => {
  const parse = c => { const v = c.match(/[\\d.]+/g).map(Number);
    return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
  const under = el => {
    const layers = [];
    for (; el; el = el.parentElement) {
      const c = parse(getComputedStyle(el).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] === 1) break;
    }
    let [r, g, b] = [255, 255, 255];
    for (const [lr, lg, lb, a] of layers.reverse()) {
      [r, g, b] = [lr * a + r * (1 - a), lg * a + g * (1 - a), lb * a + b * (1 - a)];
    }
    return [r, g, b];
  };
  return [...document.querySelectorAll('.fw-token')].filter(el => el.checkVisibility())
    .map(token => ({
      text: token.textContent,
      decoration: getComputedStyle(token).textDecorationLine,
      tint: parse(getComputedStyle(token).backgroundColor)[3],
      pieces: [token, ...token.querySelectorAll('*')].map(el => ({
        color: parse(getComputedStyle(el).color).slice(0, 3), background: under(el)})),
    }));
}"""


@pytest.mark.parametrize('scheme', ['light', 'dark'])
def test_diff_marks_are_tints_that_keep_every_character(browser, server, site, scheme):
    """The tokens that differ from the twin's line are tinted, not underlined (an
    underline hides underscores), and every syntax colour keeps 4.5:1 on the tint."""
    visitor = Session(browser, server, color_scheme=scheme, viewport=WIDE)
    try:
        tokens = []
        for rel in site.sections:
            tokens += visitor.open(rel, '?framework=both').evaluate(TOKEN_MARKS)
        assert tokens, 'no marked token'
        for token in tokens:
            assert token['decoration'] == 'none' and token['tint'] > 0, token
            for piece in token['pieces']:
                ratio = contrast(piece['color'], piece['background'])
                assert ratio >= 4.5, (scheme, token['text'], piece, ratio)
        assert visitor.errors == []
    finally:
        visitor.close()


def test_folded_twins_show_one_toggle(wide, site):
    """Twins folded whole (the solutions' hide-cell) show one toggle for the pair, across
    both columns; open, each framework's code and outputs in its column."""
    if site.real:
        page = wide.open('solutions/transformer-block', '?framework=both')
        assert page.locator('.fw-group.fw-folded').count() > 0
        assert_side_by_side(page)
        return
    page = wide.open('demo/more', '?framework=both')
    group = page.locator('.fw-group.fw-folded').filter(has_text='w.sum()')
    assert group.locator('summary:visible').count() == 1
    group.locator('summary:visible').click()
    page.wait_for_function(
        'group => [...group.querySelectorAll("details")].every(el => el.open)',
        arg=group.element_handle(),
    )
    assert group.locator('summary:visible').count() == 2
    assert group.locator('div.cell_output:visible').count() == 2
    assert_side_by_side(page)
    group.locator('div.cell.tag_jax summary').click()
    page.wait_for_function(
        'group => [...group.querySelectorAll("details")].every(el => !el.open)',
        arg=group.element_handle(),
    )
    assert group.locator('summary:visible').count() == 1
    assert wide.errors == []


PLOTS = """() => [...document.querySelectorAll('.fw-group div.cell_output img')]
  .filter(img => img.checkVisibility())
  .map(img => { const box = img.closest('div.cell_output').getBoundingClientRect();
    const r = img.getBoundingClientRect();
    return {src: img.src, svg: img.src.endsWith('.svg'), width: r.width, height: r.height,
            column: box.width, natural: [img.naturalWidth, img.naturalHeight]}; })"""


@pytest.mark.parametrize('width', [1920, WIDE['width']])
def test_plots_take_their_columns_width_side_by_side(browser, server, site, width):
    """Side by side, a drawing (SVG) scales to its column's width and a picture at most
    to it, keeping its aspect ratio."""
    visitor = Session(browser, server, viewport={'width': width, 'height': 900})
    try:
        drawings = 0
        for rel in site.sections:
            page = visitor.open(rel, '?framework=both')
            page.wait_for_load_state('load')
            for plot in page.evaluate(PLOTS):
                assert plot['width'] <= plot['column'] + 0.5, (rel, plot)
                natural_w, natural_h = plot['natural']
                if natural_w and natural_h and plot['width']:
                    ratio = (plot['height'] / plot['width']) / (natural_h / natural_w)
                    assert abs(ratio - 1) < 0.02, (rel, plot)
                if plot['svg']:
                    drawings += 1
                    assert plot['width'] >= plot['column'] - 40, (rel, plot)  # its padding
        assert drawings > 0, 'no drawing measured'
        assert visitor.errors == []
    finally:
        visitor.close()


def test_print_of_both_gives_one_framework(wide, site):
    page = wide.open(site.sections[0], '?framework=both')
    page.emulate_media(media='print')
    assert set(page.evaluate(VISIBLE_TAGGED)) == {'pytorch'}
    assert page.locator('.fw-filler:visible, .fw-tabbar:visible').count() == 0
    cell = page.locator('.fw-group div.cell.tag_pytorch').first
    assert cell.evaluate("cell => getComputedStyle(cell, '::before').content") == 'none'
    group = page.locator('.fw-group').first.bounding_box()
    assert cell.bounding_box()['width'] > 0.9 * group['width']
    assert page.locator('.fw-value.fw-only-jax:visible').count() == 0


# One search field, in the header, opened by Ctrl+K too.

SEARCH_FIELDS = """() => [...document.querySelectorAll('.search-button__button, form.bd-search')]
  .filter(el => el.getClientRects().length > 0 && !el.closest('dialog'))
  .map(el => ({header: !!el.closest('.bd-header, .bd-header-article'),
               sidebar: !!el.closest('.bd-sidebar-primary, .bd-sidebar-secondary'),
               shortcut: el.getAttribute('aria-keyshortcuts')}))"""


@pytest.mark.parametrize('width', [1600, 1200, 390])
def test_every_page_shows_one_search_field_in_the_header(browser, server, site, width):
    visitor = Session(browser, server, viewport={'width': width, 'height': 800})
    try:
        for rel in ['index', site.sections[0]]:
            page = visitor.open(rel)
            fields = page.evaluate(SEARCH_FIELDS)
            assert len(fields) == 1, f'{rel} at {width} px: {fields}'
            assert fields[0]['header'] and not fields[0]['sidebar'], fields
            assert fields[0]['shortcut'] == 'Control+K', fields
            named = page.get_by_role('button', name='Search')  # names that hold the word
            assert sum(named.nth(i).is_visible() for i in range(named.count())) == 1, rel
            page.keyboard.press('Control+k')
            field = page.locator('#pst-search-dialog input[type=search]')
            assert field.is_visible() and field.evaluate('el => el === document.activeElement')
            assert field.get_attribute('aria-label'), 'the search field has no name'
            page.keyboard.press('Escape')
            assert not field.is_visible()
        assert visitor.errors == []
    finally:
        visitor.close()
