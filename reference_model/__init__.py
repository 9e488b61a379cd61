"""An executable specification of Apache Pulsar's messaging semantics.

Pure Python: virtual time is passed in, nothing here opens a socket, starts a thread, reads a
clock or imports the Pulsar client. Start with ``reference_model.rules`` (the rule registry),
then ``reference_model.spec`` (the stable functions users call), then the modules per concern.
"""
