"""``simdask serve``: the web interface and JSON API of an index (optional extra ``web``:
Starlette, uvicorn, Jinja2, python-multipart). :func:`simdask.web.app.create_app` builds the
application; :mod:`simdask.cli.serve` runs it.
"""
