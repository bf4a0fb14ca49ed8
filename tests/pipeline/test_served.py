"""tools.site.browser.served: the built HTML on 127.0.0.1, for the browser tests, the PDF
and the screenshot; a connection the browser drops is not reported, other errors are."""

import http.client
import urllib.request

import pytest

from tools.site.browser import QuietHandler, served


def test_serves_the_folder(tmp_path):
    (tmp_path / 'page.html').write_text('<p>The Time Traveller</p>')
    with served(tmp_path) as url, urllib.request.urlopen(f'{url}/page.html') as response:
        assert response.read() == b'<p>The Time Traveller</p>'


@pytest.mark.parametrize(
    'error, reported',
    [
        (BrokenPipeError, False),
        (ConnectionResetError, False),
        (ValueError, True),
        (PermissionError, True),
    ],
)
def test_only_a_dropped_connection_goes_unreported(tmp_path, monkeypatch, capsys, error, reported):
    def fails(handler):
        raise error('while sending page.html')

    monkeypatch.setattr(QuietHandler, 'do_GET', fails)
    # The server reports the error before it closes the connection: by the time the
    # request fails here, what it printed is in stderr.
    with served(tmp_path) as url, pytest.raises(http.client.RemoteDisconnected):
        urllib.request.urlopen(f'{url}/page.html')
    err = capsys.readouterr().err
    if reported:
        assert 'Traceback' in err and f'{error.__name__}: while sending page.html' in err
    else:
        assert err == ''
