"""Evidence for a pair: exact matching passages (:mod:`.passages`), the HTML report
(:mod:`.report_html`) and the static site (:mod:`.site`).
"""
