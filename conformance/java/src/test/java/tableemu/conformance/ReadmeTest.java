package tableemu.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * README.md's Java snippet ("Connect"), compiled against this suite's classpath (the SDK version
 * pom.xml pins, which the README must name) and run as a user runs it: its own JVM, with
 * AZURE_TABLES_CONNECTION_STRING set to the server under test, twice (the second run finds the
 * table there). It must print what the README says every snippet prints.
 */
class ReadmeTest {
    private static final Path ROOT = Path.of("..", "..");

    static String connectSection() throws IOException {
        String readme = Files.readString(ROOT.resolve("README.md"), StandardCharsets.UTF_8);
        int start = readme.indexOf("\n## Connect\n");
        assertTrue(start >= 0, "README.md has no Connect section");
        String rest = readme.substring(start + 1);
        int end = rest.indexOf("\n## ", 4);
        return end < 0 ? rest : rest.substring(0, end);
    }

    static String one(String text, String regex) {
        Matcher m = Pattern.compile(regex, Pattern.MULTILINE | Pattern.DOTALL).matcher(text);
        assertTrue(m.find(), "README.md: nothing matches " + regex);
        String found = m.group(1);
        assertTrue(!m.find(), "README.md: more than one match of " + regex);
        return found;
    }

    @Test
    void javaSnippetPrintsWhatTheReadmeSays(@TempDir Path dir) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(Target.COSMOS,
            "the README's snippet connects as a user does, to the storage endpoint tableemu prints");
        String sec = connectSection();
        String source = one(sec, "^```java\n(.*?)^```$");
        String prints = one(sec, "prints `([^`]+)`");
        String pinned = one(sec, "`com\\.azure:azure-data-tables:([0-9.]+)`");
        String pom = Files.readString(Path.of("pom.xml"), StandardCharsets.UTF_8);
        assertTrue(pom.contains("<azure-data-tables.version>" + pinned + "</azure-data-tables.version>"),
            "the README names azure-data-tables " + pinned + ", pom.xml pins another version");
        String cls = one(source, "^public class (\\w+)");

        Files.writeString(dir.resolve(cls + ".java"), source, StandardCharsets.UTF_8);
        String classpath = System.getProperty("java.class.path");
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        int rc = javac.run(null, null, null, "-cp", classpath, "-d", dir.toString(),
            dir.resolve(cls + ".java").toString());
        assertEquals(0, rc, "the README's Java snippet does not compile");

        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        for (int run = 1; run <= 2; run++) {
            List<String> cmd = new ArrayList<>(List.of(javaBin, "-cp", dir + File.pathSeparator + classpath, cls));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
            pb.environment().put("AZURE_TABLES_CONNECTION_STRING", Target.CONNECTION_STRING);
            Process p = pb.start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the snippet did not finish");
            assertEquals(0, p.exitValue(), "run " + run + " failed");
            assertEquals(prints + "\n", out, "run " + run);
        }
    }
}
