import static io.trino.testing.TestingSession.testSessionBuilder;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.trino.testing.MaterializedResult;
import io.trino.testing.MaterializedRow;
import io.trino.testing.StandaloneQueryRunner;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs an in-process Trino coordinator and answers SQL requests: one JSON object per stdin
 * line, {"id": ..., "sql": ...}; one JSON object per stdout line, either {"id", "columns",
 * "types", "rows"} or {"id", "error"}. The first stdout line is {"ready": true} once the
 * engine accepts queries. Values other than numbers, strings and booleans (timestamps, dates)
 * are sent as their SQL text. Trino's own logging goes to stderr, so stdout carries replies
 * only.
 */
public final class TrinoOracleDriver {
    private TrinoOracleDriver() {}

    public static void main(String[] args) throws Exception {
        ObjectMapper json = new ObjectMapper();
        PrintStream replies =
                new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        System.setOut(System.err);
        try (StandaloneQueryRunner runner = new StandaloneQueryRunner(testSessionBuilder().build())) {
            replies.println(json.writeValueAsString(Map.of("ready", true)));
            BufferedReader requests =
                    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = requests.readLine(); line != null; line = requests.readLine()) {
                if (line.isBlank()) {
                    continue;
                }
                JsonNode request = json.readTree(line);
                replies.println(json.writeValueAsString(answer(runner, request)));
            }
        }
    }

    private static Map<String, Object> answer(StandaloneQueryRunner runner, JsonNode request) {
        Map<String, Object> reply = new LinkedHashMap<>();
        reply.put("id", request.get("id").asText());
        try {
            MaterializedResult result = runner.execute(request.get("sql").asText());
            List<List<Object>> rows = new ArrayList<>();
            for (MaterializedRow row : result.getMaterializedRows()) {
                List<Object> values = new ArrayList<>();
                for (Object field : row.getFields()) {
                    values.add(jsonValue(field));
                }
                rows.add(values);
            }
            reply.put("columns", result.getColumnNames());
            reply.put("types", result.getTypes().stream().map(Object::toString).toList());
            reply.put("rows", rows);
        } catch (RuntimeException e) {
            reply.put("error", String.valueOf(e.getMessage()));
        }
        return reply;
    }

    /**
     * Numbers, strings and booleans as they are; anything else (TIMESTAMP and DATE values:
     * SqlTimestamp, SqlDate) as its SQL text form, e.g. "2026-03-02 09:30:00".
     */
    private static Object jsonValue(Object field) {
        if (field == null || field instanceof Number || field instanceof String || field instanceof Boolean) {
            return field;
        }
        return field.toString();
    }
}
