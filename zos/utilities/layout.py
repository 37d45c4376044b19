"""What every z/OS utility listing shares: the note, in its first line, that the layout is the
model's own (IBM's real CSQ1LOGP, CSQJU004 and QJST listings are not public; the field names
follow IBM's documented keywords, the columns, texts and order are ours).
"""

HEADER_NOTE = "mqlog model of IBM MQ for z/OS; our own layout, IBM's real listing is not public"
