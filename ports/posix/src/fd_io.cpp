// placeholder until the sink exists
