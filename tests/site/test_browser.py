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

import os
import re
import warnings
from pathlib import Path

import pytest

from tests.site.book_site import REPO
from tools.site.browser import CHROMIUM, CHROMIUM_ARGS, served

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

# For each tab group: the frameworks of its active tabs and of its visible cells.
GROUP_STATE = """() => [...document.querySelectorAll('.fw-group')].map(group => ({
  active: [...group.querySelectorAll('.fw-tab.fw-active')].map(tab => tab.dataset.framework),
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
def browser():
    chromium_or_skip()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture(scope='module')
def server(site):
    with served(site.html) as base:
        yield base


class Session:
    """One browser context (its own localStorage) that records every console error,
    uncaught exception and attempt to reach another host."""

    def __init__(self, browser, base, javascript=True, color_scheme='light'):
        self.base = base
        self.errors = []
        self.offsite = []
        self.context = browser.new_context(
            viewport=VIEWPORT, java_script_enabled=javascript, color_scheme=color_scheme
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


def assert_showing(page, framework, loaded=True):
    """Every group, cell and notebook link shows `framework`; if the page was just
    `loaded` (not switched by a click), the choice was applied before the cells parsed."""
    groups = page.evaluate(GROUP_STATE)
    assert groups, f'{page.url}: no tab group'
    for i, group in enumerate(groups):
        assert group['active'] == [framework], (
            f'{page.url}: group {i} active tabs {group["active"]}'
        )
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
        assert quiet.offsite == []
    finally:
        quiet.close()


def test_screenshot_script_writes_a_small_png(browser, site, tmp_path):
    from tools.site.screenshot import screenshot

    out = screenshot(site.html, site.sections[0], tmp_path / 'shot.png', browser=browser)
    data = out.read_bytes()
    assert data[:8] == b'\x89PNG\r\n\x1a\n' and len(data) < 300_000
    assert int.from_bytes(data[16:20], 'big') == 1200


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
    visitor = Session(browser, server, color_scheme=scheme)
    failing, reported = [], []
    try:
        for rel in site_pages(site):
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
    id: tab.id, framework: tab.dataset.framework, tabindex: tab.getAttribute('tabindex'),
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
        assert [t['tabindex'] for t in tabs if t['selected'] == 'true'] == ['0'], (
            f'bar {i}: {tabs}'
        )
        assert all(t['tabindex'] == '-1' for t in tabs if t['selected'] != 'true'), (
            f'bar {i}: {tabs}'
        )
        for tab in tabs:
            for panel_id in tab['controls']:
                panel = page.evaluate(PANEL, panel_id)
                assert panel == {
                    'role': 'tabpanel',
                    'labelledby': tab['id'],
                    'framework': tab['framework'],
                    'group': i,
                }, (tab, panel)
    controlled = sum(len(t['controls']) for tabs in bars for t in tabs)
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
    page.keyboard.press('End')
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
        other = (
            page.locator('.fw-tabbar')
            .nth(0)
            .locator('.fw-tab:not(.fw-active)')
            .evaluate(TAB_COLOURS)
        )
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
