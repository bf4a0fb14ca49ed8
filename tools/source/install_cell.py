# @title Install what this notebook needs (nothing, where it is installed)
import json
import re
import subprocess
import sys
from importlib import metadata

# Written for this notebook by the book's build. PACKAGES: (lower bound, outputs' version)
LIBRARY = 'd2l_mini[torch] @ git+https://github.com/d2l-mini/transformer-block-book@0123456789abcdef0123456789abcdef01234567'
COMMIT = '0123456789abcdef0123456789abcdef01234567'
PACKAGES = {'torch': ((2, 4), (2, 13, 0)), 'scikit-learn': ((0,), (1, 9, 1))}


def version(package):  # (2, 5, 1) for 2.5.1+cu121; () where it is not installed
    found = [d.version for d in metadata.distributions(name=package)] + ['']
    return tuple(map(int, re.findall(r'\d+', found[0].split('+')[0])[:3]))


def pip(*args):  # stops the cell with pip's message where pip fails
    done = subprocess.run([sys.executable, '-m', 'pip', *args], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f'pip {" ".join(args)} failed:\n{done.stderr}{done.stdout}')


found = [d.read_text('direct_url.json') or '{}' for d in metadata.distributions(name='d2l_mini')]
source = json.loads(found[0]).get('vcs_info', {}).get('commit_id', 'checkout') if found else None
if COMMIT and source not in (None, 'checkout', COMMIT):  # from another commit: replace it
    pip('uninstall', '--quiet', '--yes', 'd2l_mini')
    source = None
made = {p: '.'.join(map(str, v)) for p, (_, v) in PACKAGES.items()}  # what made the outputs
missing = [f'{p}=={made[p]}' for p, (oldest, _) in PACKAGES.items() if version(p) < oldest]
if missing or source is None:
    pip('install', '--quiet', '--upgrade', *([LIBRARY] if source is None else []), *missing)
if others := [f'{p} {made[p]}' for p, (_, v) in PACKAGES.items() if version(p) != v]:
    print('The outputs shown were made with', ', '.join(others))
