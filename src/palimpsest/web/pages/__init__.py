"""The pages, as HTML: each a function of the service's answer (a dict), escaped by `html`.

No rules here: what a person may do is decided by the service; a page only leaves out the
forms a viewer could not use (the service refuses them anyway). One module per page or
queue; `common` holds what they share.
"""
